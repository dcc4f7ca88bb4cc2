/**
 * Imported before the handler: Powertools reads these when its logger and metrics
 * are created. The handler's JSON logs and EMF metrics stay off in tests and
 * benches unless BENCHDROP_TEST_LOGS is set.
 */
if (!process.env['BENCHDROP_TEST_LOGS']) {
  process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
  process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
}
export {};
