/**
 * How the Lambda functions are bundled and started. infra/constructs/lab-function.ts
 * hands these settings to NodejsFunction; bench/lambda.ts and test/infra/bundling.test.ts give
 * the same ones to esbuild directly (loading the CDK stack would cost seconds), so
 * what they measure and check is the bundle that is deployed. Kept free of
 * aws-cdk-lib for that reason.
 *
 * What makes a cold start short (BENCHMARKS.md, "Lambda size and init"): Node
 * compiles the whole bundle before the handler runs, so every kilobyte left out
 * counts; and one file loads far faster than hundreds resolved from node_modules.
 */
import type { BuildOptions } from 'esbuild';

/** esbuild's target for the functions' runtime (Runtime.NODEJS_24_X in the stack). */
export const LAMBDA_TARGET = 'node24';

/**
 * Credential providers the SDK's default chain (@aws-sdk/credential-provider-node)
 * imports dynamically, only when the environment holds no credentials. Lambda
 * always puts the function role's credentials there (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and the chain tries them first, so a
 * function never loads these. Left out of the bundle, with the STS, SSO and OIDC
 * clients they bring, they are not compiled at every cold start.
 * Were a function ever started without those variables, the import would fail
 * naming the package.
 */
export const CREDENTIAL_PROVIDERS_UNUSED_IN_LAMBDA = [
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@smithy/credential-provider-imds',
];

export interface LambdaBundling {
  minify: boolean;
  sourceMap: boolean;
  sourcesContent: boolean;
  mainFields: string[];
  /** Modules left out of the bundle, to be resolved at run time (or never loaded). */
  externalModules: string[];
  banner: string;
}

/**
 * esbuild settings besides format (ESM) and target, in NodejsFunction's terms.
 * The AWS SDK is bundled rather than left to the copy the runtime provides: one
 * minified file, tree-shaken to the clients and commands the handler uses, loads
 * in a fraction of the time Node needs to resolve and compile the hundreds of
 * files of `@aws-sdk/*` and `@smithy/*` from node_modules. It also pins the SDK
 * to the lock file's version.
 */
export const LAMBDA_BUNDLING: LambdaBundling = {
  minify: true,
  // Shipped beside the bundle for reading a stack trace from the logs, but not
  // loaded at run time: with NODE_OPTIONS=--enable-source-maps Node reads, parses
  // and indexes the map at every cold start, even with the map cut down to the
  // project's own sources (BENCHMARKS.md).
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  externalModules: CREDENTIAL_PROVIDERS_UNUSED_IN_LAMBDA,
  // Bundled CommonJS dependencies that call require() need it in an ES module.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
};

/**
 * The esbuild options NodejsFunction derives from these settings (bundle, platform
 * node, ESM, the target, and LAMBDA_BUNDLING), for building the same bundle
 * without CDK. `external` replaces the bundling's external modules.
 */
export function lambdaEsbuildOptions(external: string[] = LAMBDA_BUNDLING.externalModules): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: LAMBDA_TARGET,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    mainFields: LAMBDA_BUNDLING.mainFields,
    external,
    banner: { js: LAMBDA_BUNDLING.banner },
  };
}
