/**
 * Puts one lab's stack into an app, with the cdk-nag checks: shared by infra/app.ts
 * and the infra tests, so that both synthesise exactly the same thing.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { parseLabSettings, stackNameOf, type StackSettings } from './settings.ts';
import { BenchdropStack, type BenchdropStackProps } from './stack.ts';

const checked = new WeakSet<App>();

/** Registers cdk-nag's AwsSolutions pack on the app (once). */
export function addChecks(app: App): void {
  if (checked.has(app)) return;
  checked.add(app);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}

/**
 * Adds the stack of one lab. Without `settings`, they are read from the app's
 * context (`-c lab=NAME ...`) and validated: a LabSettingsError names the bad key.
 * `options` are for tests (a stand-in function entry); the app passes none.
 */
export function buildLab(
  app: App,
  settings?: StackSettings,
  options: Pick<BenchdropStackProps, 'apiEntry'> = {},
): BenchdropStack {
  const resolved = settings ?? parseLabSettings((key) => app.node.tryGetContext(key));
  addChecks(app);
  return new BenchdropStack(app, stackNameOf(resolved.lab), { settings: resolved, ...options });
}
