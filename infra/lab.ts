/**
 * Puts one lab's stack into an app, with the cdk-nag checks: shared by infra/app.ts
 * and the infra tests, so that both synthesise exactly the same thing.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { LabSettings } from '../shared/config.ts';
import { parseLabSettings, stackNameOf } from './settings.ts';
import { BenchdropStack } from './stack.ts';

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
 */
export function buildLab(app: App, settings?: LabSettings): BenchdropStack {
  const resolved = settings ?? parseLabSettings((key) => app.node.tryGetContext(key));
  addChecks(app);
  return new BenchdropStack(app, stackNameOf(resolved.lab), { settings: resolved });
}
