/**
 * Synthesises lab stacks for the infra tests the way `cdk synth` does (cdk.json's
 * context and feature flags, cdk-nag registered through infra/lab.ts), but without
 * bundling the functions, into a temporary cloud assembly that `dispose` removes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildLab } from '../../infra/lab.ts';
import type { StackSettings } from '../../infra/settings.ts';
import type { BenchdropStack } from '../../infra/stack.ts';
import type { Construct } from 'constructs';
import { labSettings } from '../../infra/settings.ts';

const CDK_JSON = fileURLToPath(new URL('../../cdk.json', import.meta.url));
/** The API function's real entry, and the stand-in used while it does not exist yet. */
export const API_HANDLER = fileURLToPath(new URL('../../functions/api/handler.ts', import.meta.url));
const API_STAND_IN = fileURLToPath(new URL('./fixtures/api-handler.ts', import.meta.url));

/**
 * buildLab as the app calls it, except that the API function gets a stand-in entry
 * while functions/api/handler.ts is missing (CDK checks that an entry exists even
 * with bundling skipped; the template does not depend on it).
 */
export function buildTestLab(app: App, settings?: StackSettings): BenchdropStack {
  return buildLab(app, settings, existsSync(API_HANDLER) ? {} : { apiEntry: API_STAND_IN });
}

/** The context block of cdk.json: feature flags and CLI settings, as `cdk synth` passes them. */
export function cdkJsonContext(): Record<string, unknown> {
  const json = JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context?: Record<string, unknown> };
  return json.context ?? {};
}

/** A test App: cdk.json's context plus `extra`, bundling skipped, output in a fresh temp dir. */
export function testApp(extra: Record<string, unknown> = {}): { app: App; outdir: string; dispose: () => void } {
  const outdir = mkdtempSync(join(tmpdir(), 'benchdrop-cdk-'));
  const app = new App({ outdir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...extra } });
  return { app, outdir, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

export interface SynthesisedLab {
  stack: BenchdropStack;
  template: Template;
}

export interface Synthesis {
  app: App;
  outdir: string;
  labs: Record<string, SynthesisedLab>;
  /** CDK's validation report of the synth (cdk-nag and CloudFormation checks). */
  report: ValidationReport;
  dispose: () => void;
}

export interface ValidationReport {
  pluginReports: {
    pluginName: string;
    conclusion?: string;
    violations: { ruleName: string; severity?: string; description?: string }[];
  }[];
}

/** Builds every lab into one App, synthesises it once (cdk-nag runs here) and parses the templates. */
export function synthLabs(settings: StackSettings[]): Synthesis {
  const { app, outdir, dispose } = testApp();
  try {
    const stacks = settings.map((lab) => buildTestLab(app, lab));
    app.synth();
    const labs = Object.fromEntries(
      stacks.map((stack) => [stack.settings.lab, { stack, template: Template.fromStack(stack) }]),
    );
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as ValidationReport;
    return { app, outdir, labs, report, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/**
 * Every AwsSolutions finding of the app as if nothing were acknowledged, as
 * `RuleId[finding] @ construct path` strings: what the acknowledgements cover.
 */
export function unacknowledgedNagFindings(app: App): string[] {
  const checks = new AwsSolutionsChecks();
  // cdk-nag filters acknowledged findings in its private isAcknowledged(); switch that
  // off on this one instance to see every finding.
  Object.defineProperty(checks, 'isAcknowledged', { value: () => false });
  return checks
    .validateScope(app)
    .violations.flatMap((violation) =>
      violation.violatingResources.map((resource) => `${violation.ruleName} @ ${resource.constructPath}`),
    )
    .sort();
}

/** The acknowledgements recorded on the construct tree: rule id -> reason, by construct path. */
export function acknowledgements(app: App): { path: string; id: string; reason: string }[] {
  const found: { path: string; id: string; reason: string }[] = [];
  for (const construct of app.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== 'aws:cdk:acknowledged-rules' || !entry.data) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.push({ path: construct.node.path, id: id.replace(/^annotation::/i, ''), reason });
      }
    }
  }
  return found;
}

// --- Template helpers ---------------------------------------------------------------

export interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string[];
}

export function resources(template: Template, type?: string): [string, CfnResource][] {
  const all = Object.entries((template.toJSON() as { Resources: Record<string, CfnResource> }).Resources);
  return type ? all.filter(([, resource]) => resource.Type === type) : all;
}

/** The single resource of a type whose properties satisfy `pick`; fails when not exactly one. */
export function only(
  template: Template,
  type: string,
  pick: (resource: CfnResource) => boolean = () => true,
): [string, CfnResource] {
  const matches = resources(template, type).filter(([, resource]) => pick(resource));
  if (matches.length !== 1) throw new Error(`expected exactly one ${type}, found ${matches.length}`);
  return matches[0];
}

export const getAtt = (logicalId: string, attribute: string) => ({ 'Fn::GetAtt': [logicalId, attribute] });
export const ref = (logicalId: string) => ({ Ref: logicalId });

export function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The value of the `benchdrop:lab` tag of a resource, if it has one. */
export function labTag(resource: CfnResource): string | undefined {
  const tags = resource.Properties?.Tags;
  if (Array.isArray(tags)) return tags.find((tag: { Key: string }) => tag.Key === 'benchdrop:lab')?.Value;
  if (tags && typeof tags === 'object') return (tags as Record<string, string>)['benchdrop:lab'];
  return undefined;
}

export const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
/** What an SQS event source mapping needs of its queue (CDK grants it with addEventSource). */
export const CONSUMER_ACTIONS = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];

/**
 * What a role's identity policies grant: sorted actions by resource (each resource as
 * its template JSON). The role has one policy, of unconditional Allows only.
 */
export function roleGrants(template: Template, roleId: string): Record<string, string[]> {
  const policies = resources(template, 'AWS::IAM::Policy').filter(([, p]) =>
    asArray(p.Properties!.Roles).some((r) => JSON.stringify(r) === JSON.stringify(ref(roleId))),
  );
  expect(policies, `${roleId} has one policy`).toHaveLength(1);
  expect(policies[0]![1].Properties!.Roles).toEqual([ref(roleId)]);
  const granted: Record<string, Set<string>> = {};
  for (const statement of policies[0]![1].Properties!.PolicyDocument.Statement as {
    Effect: string;
    Action: string | string[];
    Resource: unknown;
    Condition?: unknown;
  }[]) {
    expect(statement.Effect).toBe('Allow');
    expect(statement.Condition).toBeUndefined();
    for (const resource of asArray(statement.Resource)) {
      const key = JSON.stringify(resource);
      for (const action of asArray(statement.Action)) (granted[key] ??= new Set()).add(action);
    }
  }
  return Object.fromEntries(Object.entries(granted).map(([key, actions]) => [key, [...actions].sort()]));
}

/** What the one alarm on `metricName` watches: namespace and dimensions (literal values only). */
export function alarmWatching(
  template: Template,
  metricName: string,
): { namespace: string; dimensions: Record<string, string> } {
  const [, alarm] = only(template, 'AWS::CloudWatch::Alarm', (r) => r.Properties?.MetricName === metricName);
  const dimensions = (alarm.Properties!.Dimensions as { Name: string; Value: unknown }[]).map(({ Name, Value }) => {
    if (typeof Value !== 'string') throw new Error(`alarm on ${metricName}: dimension ${Name} is not a literal`);
    return [Name, Value] as const;
  });
  return { namespace: alarm.Properties!.Namespace as string, dimensions: Object.fromEntries(dimensions) };
}

/** The environment the template gives a function. */
export function functionEnvironment(template: Template, functionId: string): Record<string, unknown> {
  return (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources[functionId]!.Properties!
    .Environment.Variables;
}

/** What the synthesised lab deploys a function with. */
export interface Deployed {
  /** The function's environment variables in the template. */
  environment: Record<string, unknown>;
  /** Per metric asked for: the namespace and dimensions of the alarm that watches it. */
  watching: { namespace: string; dimensions: Record<string, string> }[];
}

/** Synthesise `lab` and read one function's environment and the alarms on `metrics`. */
export function deployedAs(
  lab: string,
  functionOf: (stack: BenchdropStack) => Construct,
  metrics: readonly string[],
): Deployed {
  const synth = synthLabs([labSettings({ lab })]);
  try {
    const { stack, template } = synth.labs[lab]!;
    const environment = functionEnvironment(
      template,
      stack.getLogicalId(functionOf(stack).node.defaultChild as Parameters<typeof stack.getLogicalId>[0]),
    );
    return { environment, watching: metrics.map((metric) => alarmWatching(template, metric)) };
  } finally {
    synth.dispose();
  }
}
