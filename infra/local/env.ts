/**
 * Imported first by the local lab: the handlers' Powertools logs and metrics are
 * for CloudWatch; on a terminal only warnings and errors are worth printing.
 * Set the variables yourself to see more.
 */
process.env['POWERTOOLS_LOG_LEVEL'] ??= 'WARN';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
