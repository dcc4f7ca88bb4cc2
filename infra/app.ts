/**
 * The CDK app: one stack per lab, `npx cdk synth -c lab=NAME` -> `Benchdrop-NAME`.
 * Settings come from context (see infra/settings.ts); cdk-nag's AwsSolutions
 * checks run on every synth and fail it on any unacknowledged finding.
 */
import { App } from 'aws-cdk-lib';
import { buildLab } from './lab.ts';
import { LabSettingsError } from './settings.ts';

const app = new App();
try {
  buildLab(app);
} catch (error) {
  if (!(error instanceof LabSettingsError)) throw error;
  // A plain message, not a stack trace: the CLI shows it above "Subprocess exited with error 1".
  console.error(`benchdrop: ${error.message}`);
  process.exit(1);
}
app.synth();
