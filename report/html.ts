/**
 * The report page's HTML around its bundle (build.ts makes the bundle): the
 * form, states and uploads of the served page, or one comparison embedded
 * (`benchdrop compare --html`, a frozen report of POST /reports). Nothing here
 * runs esbuild, so the API function can build a frozen report's page from the
 * bundle packaged beside it.
 */
import { DEFAULT_REGION, LAB_CREDENTIALS } from '../shared/config.ts';
import {
  DISKPERF_METRICS,
  FIO_METRICS,
  IOSTAT_METRICS,
  LOAD_METRICS,
  METRIC_GROUPS,
  METRIC_SPECS,
  type MetricSpec,
} from '../shared/metrics.ts';
import type { FrozenReport } from '../shared/reports.ts';

/** The page's script and style, as esbuild bundles them (build.ts bundlePage). */
export interface PageBundle {
  js: string;
  css: string;
}

/** `</script>` inside inlined code or data would end the script element early. */
const scriptSafe = (text: string) => text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

/** A selector field of the form, `a` or `b`, described by the device note. */
const selectorField = (id: 'a' | 'b') =>
  `<label>${id.toUpperCase()} (selector)<input id="${id}" name="${id}" autocomplete="off" required ` +
  'list="device-labels" aria-describedby="devices-note"></label>';

/** Where a spec goes in the metric menu: the groups, a format's metrics, or the load (by name only). */
function menuGroupOf(spec: MetricSpec): { label: string; format?: string } {
  const among = (list: readonly string[]) => list.includes(spec);
  if (among(METRIC_GROUPS)) return { label: 'groups' };
  if (among(LOAD_METRICS)) return { label: 'iostat: the load', format: 'iostat' };
  if (among(DISKPERF_METRICS)) return { label: 'diskperf', format: 'diskperf' };
  if (among(IOSTAT_METRICS)) return { label: 'iostat', format: 'iostat' };
  if (among(FIO_METRICS)) return { label: 'fio', format: 'fio' };
  return { label: 'other' };
}

/**
 * The metric field's choices: every metric spec in its order, in groups by
 * format (each marked `data-format`, so that the page can leave out the
 * formats its lab does not hold).
 */
function metricOptions(): string {
  const runs: { label: string; format?: string; specs: MetricSpec[] }[] = [];
  for (const spec of METRIC_SPECS) {
    const group = menuGroupOf(spec);
    const last = runs[runs.length - 1];
    if (last?.label === group.label) last.specs.push(spec);
    else runs.push({ ...group, specs: [spec] });
  }
  return runs
    .map(
      ({ label, format, specs }) =>
        `<optgroup label="${label}"${format ? ` data-format="${format}"` : ''}>` +
        `${specs.map((m) => `<option>${m}</option>`).join('')}</optgroup>`,
    )
    .join('');
}

const METRIC_OPTIONS = metricOptions();

/** A table the page fills: a header row of `columns`, and an empty body `bodyId`. */
const emptyTable = (attributes: string, columns: readonly string[], bodyId: string) =>
  `<table ${attributes}><thead><tr>${columns.map((c) => `<th>${c}</th>`).join('')}</tr></thead>` +
  `<tbody id="${bodyId}"></tbody></table>`;

/** The form: every field labelled, the device note describing both selectors. */
const CONTROLS = `<form id="controls" aria-label="comparison">
  ${selectorField('a')}
  ${selectorField('b')}
  <label>metric<select id="metric" name="metric">${METRIC_OPTIONS}</select></label>
  <button type="submit">Compare</button>
</form>
<datalist id="device-labels"></datalist>
<p id="devices-note" hidden></p>`;

/** The empty state's long lines in parts: the upload with the AWS CLI, and its notes. */
const LAB_JSON = "(also in its data folder's <code>lab.json</code>)";
const AWS_CLI_UPLOAD =
  `aws --endpoint-url S3_ENDPOINT --region ${DEFAULT_REGION} ` +
  's3 cp run1.txt s3://BUCKET/sas10k/run1.txt --metadata device=sas10k';
const CREDENTIALS = `${LAB_CREDENTIALS.accessKeyId} / ${LAB_CREDENTIALS.secretAccessKey}`;
const DEMO_LOGS = '<code>npm start</code> without <code>--no-samples</code> ingests the demo logs';

/** What an empty lab shows instead of a form that has nothing to compare: how to put logs in. */
const EMPTY_STATE = `<section id="empty" aria-labelledby="empty-title" hidden>
  <h2 id="empty-title">This lab holds no runs yet</h2>
  <p>Upload a diskperf or iostat log (run it where <code>npm start</code> runs, so it finds the lab):</p>
  <pre><code>npx benchdrop upload run1.txt --device sas10k --wait</code></pre>
  <p>or with the AWS CLI, to the S3 endpoint and bucket <code>npm start</code> printed ${LAB_JSON}:</p>
  <pre><code>${AWS_CLI_UPLOAD}</code></pre>
  <p>(credentials ${CREDENTIALS}). ${DEMO_LOGS}. Once a log is in:</p>
  <button type="button" id="recheck">Check again</button>
</section>`;

/** A wide table in a box of its own that scrolls sideways (and by keyboard), so that the page never does. */
const scrollBox = (labelledBy: string, table: string, id?: string) =>
  `<div${id ? ` id="${id}"` : ''} class="table-wrap" tabindex="0" role="region" aria-labelledby="${labelledBy}">` +
  `${table}</div>`;

/** The comparison as one table (shared/comparison/table.ts), its footnotes, and the table to download. */
const TABLE = `<section id="table-section" aria-labelledby="table-title">
    <h2 id="table-title">Every point</h2>
    <p id="downloads">Download this table:
      <a id="download-csv" href="#">CSV</a>
      <a id="download-md" href="#">Markdown</a></p>
    ${scrollBox('table-title', '<table id="comparison-table"></table>')}
    <ul id="table-notes" class="notes"></ul>
  </section>`;

/**
 * fio sweeps: one metric picked, its ratio by block size and by queue depth and
 * both sides' values by each; then the latency percentiles side by side.
 */
const FIO_CHARTS = `<section id="fio-section" aria-labelledby="fio-title" hidden>
      <h2 id="fio-title">By block size and queue depth</h2>
      <form id="fio-controls" aria-label="fio charts">
        <label>charted<select id="fio-metric"></select></label>
      </form>
      <div id="fio-bs-chart" class="chart"></div>
      <p id="fio-bs-note" class="chart-note" hidden></p>
      <div id="fio-qd-chart" class="chart"></div>
      <p id="fio-qd-note" class="chart-note" hidden></p>
      <div id="fio-abs-chart" class="chart"></div>
      <p id="fio-abs-note" class="chart-note" hidden></p>
      <div id="fio-abs-qd-chart" class="chart"></div>
      <p id="fio-abs-qd-note" class="chart-note" hidden></p>
      <h3 id="fio-pct-title">Latency percentiles side by side</h3>
      <p id="fio-pct-note" class="chart-note"></p>
      ${scrollBox('fio-pct-title', '<table id="fio-pct-table"></table>', 'fio-pct-box')}
    </section>`;

/**
 * The charts: by request size (diskperf), by block size and queue depth (fio),
 * or diverging bars (iostat) for performance and then load.
 */
const CHARTS = `<section id="charts" aria-label="charts">
    <div id="ratio-chart" class="chart"></div>
    <p id="ratio-note" class="chart-note" hidden></p>
    <div id="abs-chart" class="chart"></div>
    <p id="abs-note" class="chart-note" hidden></p>
    ${FIO_CHARTS}
    <div id="bar-chart" class="chart"></div>
    <div id="load-chart" class="chart"></div>
  </section>`;

/** Each run's samples over time: read from the lab (or the API) on the served page; said so in a file. */
const SERIES = (served: boolean) => `<section id="series-section" aria-labelledby="series-title" hidden>
    <h2 id="series-title">Over time, run by run</h2>
    ${
      served
        ? `<form id="series-controls" aria-label="time series">
      <label>plotted<select id="series-metric"></select></label>
      <label>A device<select id="series-a"></select></label>
      <label>B device<select id="series-b"></select></label>
    </form>
    <p id="series-status" role="status"></p>
    <div id="series-chart" class="chart"></div>
    <p id="series-note" class="chart-note" hidden></p>`
        : `<p id="series-offline">Each run's samples over time need the lab or the API: open this comparison on
    the lab's page (<code>npm start</code>), or read <code>GET /runs/{id}/samples</code> for the runs under
    Setups below.</p>`
    }
  </section>`;

/** The runs compared, side by side: one column per run, one row per field, what differs marked. */
const SETUPS = `<section id="setups" aria-labelledby="setups-title" hidden>
    <h2 id="setups-title">Setups side by side</h2>
    <p id="setups-note"></p>
    ${scrollBox('setups-title', '<table id="setups-table"></table>')}
  </section>`;

/** The comparison itself: all a file from `compare --html` holds. */
const RESULTS = (served: boolean) => `<section id="results" aria-label="comparison result" hidden>
  <section id="summary">
    <span id="ratio"></span><span id="sentence"></span>
    <div id="interval"></div>
    <div id="advice"></div>
    <div id="paired"></div>
    <div id="sides"></div>
    <div id="warnings-title" hidden>warnings</div>
    <ul id="warnings"></ul>
  </section>
  ${CHARTS}
  ${TABLE}
  ${SERIES(served)}
  ${SETUPS}
</section>`;

const UPLOAD_COLUMNS = ['key', 'status', 'device', 'runs or reason', 'updated'];

/** The lab's uploads: GET /uploads' default answer, on the served page only. */
const UPLOADS = `<section id="uploads-section" aria-labelledby="uploads-title" aria-busy="true">
  <h2 id="uploads-title">Uploads</h2>
  <p id="uploads-status" role="status"></p>
  ${scrollBox('uploads-title', emptyTable('id="uploads-table" hidden', UPLOAD_COLUMNS, 'uploads'))}
</section>`;

/**
 * The page: served (no `embedded`) it has the form, the loading, error and
 * empty states and the uploads, and asks the API on its origin; with `embedded`
 * it holds that comparison only and fetches nothing.
 */
export function pageHtml({ js, css }: PageBundle, embedded?: object, title = 'benchdrop report'): string {
  const served = embedded === undefined;
  const data = served ? '' : `<script>window.__BENCHDROP__ = ${scriptSafe(JSON.stringify(embedded))};</script>`;
  const main = served
    ? `<p id="status" role="status"></p>\n<div id="error" role="alert" hidden></div>\n${EMPTY_STATE}\n${RESULTS(true)}`
    : RESULTS(false);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${title.replace(/[<&]/g, '')}</title>
<style>${css}</style>
</head>
<body data-state="loading">
<h1>benchdrop: how much faster is A than B?</h1>
${served ? CONTROLS : ''}
<main id="main" aria-busy="${served}">
${main}
</main>
${served ? UPLOADS : ''}
${data}<script>${scriptSafe(js)}</script>
</body>
</html>
`;
}

/**
 * A frozen report's page (POST /reports): the comparison as it was, with its id,
 * the moment it was frozen and what was asked, and nothing fetched.
 */
export function frozenReportHtml(bundle: PageBundle, report: FrozenReport): string {
  const { id, createdAt, query, comparison } = report;
  return pageHtml(
    bundle,
    { comparison, frozen: { id, createdAt, query } },
    `benchdrop report ${id}: ${query.a} vs ${query.b}`,
  );
}
