/**
 * The lab's results table. `Table` (AWS::DynamoDB::Table), not `TableV2`
 * (AWS::DynamoDB::GlobalTable): a lab lives in one region, and switching the
 * construct later would replace the table and its data. Keys and indexes come
 * from shared/store/table.ts, all attributes strings.
 */
import type { Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { INDEXES, TABLE_KEY } from '../../shared/store/table.ts';
import type { PartProps } from './lab-function.ts';

export function resultsTable(stack: Stack, props: PartProps): dynamodb.Table {
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: TABLE_KEY.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: TABLE_KEY.sortKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    deletionProtection: props.settings.deletionProtection,
    removalPolicy: props.dataRemoval,
  });
  for (const index of Object.values(INDEXES)) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
  }
  return table;
}
