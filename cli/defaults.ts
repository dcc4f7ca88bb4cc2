/**
 * Defaults the help text states and the commands apply. A module with no
 * imports: `benchdrop --help` reads it without loading any command.
 */

/** How long `upload --wait` waits for the pipeline, in seconds. */
export const DEFAULT_TIMEOUT_S = 120;
