/**
 * The one place that silences the AWS SDK's NodeVersionSupportWarning: under Node 20
 * the SDK prints a notice on stderr the first time a client is made, to say that
 * its releases from early 2027 on need Node 22. The project supports Node 20 until
 * then, so the notice is noise in every lab start, upload and test run.
 *
 * The SDK skips that notice, and only that one, when this variable is "true"; every
 * other warning still prints. Imported first by each entry point that starts Node
 * (infra/local/main.ts, bin/benchdrop.js, the vitest setup, the benches), it sets
 * the variable unless it is already set (set it to "false" to see the notice).
 * Child processes inherit it; the tests and benches that build a child's
 * environment from scratch spread SDK_NODE_NOTICE_OFF into it.
 *
 * Lambda runs Node 24, where the SDK prints nothing: the functions need none of this.
 */
export const SDK_NODE_NOTICE_OFF = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } as const;

for (const [name, value] of Object.entries(SDK_NODE_NOTICE_OFF)) process.env[name] ??= value;
