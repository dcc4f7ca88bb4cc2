// `node --import ./register.mjs ...`: records the URL of every module the process
// loads, one per line, in $BENCHDROP_MODULE_LOG (test/cli/shipped.test.ts).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
