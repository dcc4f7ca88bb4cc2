/**
 * The report page as one self-contained HTML document: page.ts and its CSS
 * (uPlot's included) bundled by esbuild in memory and inlined, so the page needs
 * nothing from any network. With `embedded`, the data is in the page and it
 * fetches nothing at all (`benchdrop compare --html`).
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./page.ts', import.meta.url));

let bundle: Promise<{ js: string; css: string }> | undefined;

async function bundlePage(): Promise<{ js: string; css: string }> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const text = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { js: text('.js'), css: text('.css') };
}

/** `</script>` inside inlined code or data would end the script element early. */
const scriptSafe = (text: string) => text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

export async function reportHtml(embedded?: object, title = 'benchdrop report'): Promise<string> {
  const { js, css } = await (bundle ??= bundlePage());
  const data = embedded === undefined ? '' : `<script>window.__BENCHDROP__ = ${scriptSafe(JSON.stringify(embedded))};</script>`;
  const metrics = ['all', 'write', 'read', 'seq', 'random', 'fwd_wt', 'fwd_rd', 'bwd_wt', 'bwd_rd', 'rnd_wt', 'rnd_rd', 'iops', 'read_iops', 'write_iops', 'read_kBps', 'write_kBps', 'wait_ms', 'service_ms', 'read_ms', 'write_ms', 'active_queue', 'util_pct'];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title.replace(/[<&]/g, '')}</title>
<style>${css}</style>
</head>
<body data-state="loading">
<h1>benchdrop: how much faster is A than B?</h1>
<form id="controls">
  <label>A (selector)<input id="a" name="a" autocomplete="off"></label>
  <label>B (selector)<input id="b" name="b" autocomplete="off"></label>
  <label>metric<select id="metric" name="metric">${metrics.map((m) => `<option>${m}</option>`).join('')}</select></label>
  <button type="submit">Compare</button>
</form>
<p id="error" role="alert"></p>
<section id="summary">
  <span id="ratio"></span><span id="sentence"></span>
  <div id="interval"></div>
  <div id="sides"></div>
  <ul id="warnings"></ul>
</section>
<div id="ratio-chart" class="chart"></div>
<div id="abs-chart" class="chart"></div>
<div id="bar-chart" class="chart"></div>
<details><summary>points left out</summary><ul id="excluded"></ul></details>
<section id="uploads-section">
  <h2>Uploads</h2>
  <table><thead><tr><th>key</th><th>status</th><th>device</th><th>runs or reason</th><th>updated</th></tr></thead><tbody id="uploads"></tbody></table>
</section>
${data}<script>${scriptSafe(js)}</script>
</body>
</html>
`;
}
