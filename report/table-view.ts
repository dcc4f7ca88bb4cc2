/**
 * The comparison as one table on the page (shared/comparison/table.ts's
 * comparisonTable, which the CLI prints and the API answers as CSV and
 * Markdown): a caption, column and row headers, each row's marks linking to
 * its footnote, the notes below (points' footnotes, points left out, the
 * warnings, those about the setups linking to them), and the same table to
 * download as CSV or Markdown. Downloads are Blobs made in the page, so a
 * written file offers them with no server.
 */
import {
  comparisonTable,
  tableCsv,
  tableMarkdown,
  type Comparison,
  type ComparisonTable,
  type TableNote,
  type TableRow,
} from '../shared/comparison/index.ts';
import { $, el } from './dom.ts';

/** Columns of words (the rest are numbers, right-aligned); fio's point (`randread 4k qd1 nj1`) among them. */
const WORD_COLUMN = /^(metric|unit|note|~|point .*|.* interval)$/;
/** The notes the table's footnotes hold; the advice and the sentence are the summary's. */
const FOOTNOTE_KINDS: readonly TableNote['kind'][] = ['point', 'excluded', 'warning'];

let downloads: string[] = [];

export function renderTable(c: Comparison): void {
  const t = comparisonTable(c);
  const table = $('comparison-table');
  table.replaceChildren(el('caption', { textContent: t.title }), tableHead(t), tableBody(t));
  const notes = t.notes.filter((n) => FOOTNOTE_KINDS.includes(n.kind));
  $('table-notes').replaceChildren(...notes.map(noteItem));
  $('table-notes').hidden = notes.length === 0;
  offerDownloads(t, c);
}

function tableHead(t: ComparisonTable): HTMLTableSectionElement {
  const tr = el('tr');
  tr.append(...t.columns.map((name) => el('th', { scope: 'col', textContent: name })));
  return el('thead', {}, tr);
}

function tableBody(t: ComparisonTable): HTMLTableSectionElement {
  const notRow = t.columns.indexOf('~');
  return el(
    'tbody',
    {},
    ...t.rows.map((r) => {
      const tr = el('tr', { className: r.kind });
      if (notRow >= 0 && r.cells[notRow] === '~') tr.classList.add('insignificant');
      tr.dataset['kind'] = r.kind;
      tr.dataset['metric'] = r.metric;
      if (r.reqSize !== undefined) tr.dataset['reqSize'] = String(r.reqSize);
      if (r.point !== undefined) tr.dataset['point'] = r.point;
      tr.append(...r.cells.map((text, i) => cellOf(t, r, text, i)));
      return tr;
    }),
  );
}

/** A cell: the first is the row's header; the last carries the row's marks as links to their notes. */
function cellOf(t: ComparisonTable, r: TableRow, text: string, i: number): HTMLTableCellElement {
  const cell = i === 0 ? el('th', { scope: 'row', textContent: text }) : el('td', { textContent: text });
  if (!WORD_COLUMN.test(t.columns[i]!)) cell.className = 'num';
  if (i === r.cells.length - 1 && r.marks.length > 0) {
    if (text) cell.append(' ');
    r.marks.forEach((mark, k) => {
      if (k > 0) cell.append(' ');
      cell.append(el('a', { href: `#${noteId(mark)}`, className: 'mark', textContent: `(${mark})` }));
    });
  }
  return cell;
}

const noteId = (mark: string) => `note-${mark}`;

/** A warning about how the runs differ points to the setups side by side. */
export const setupsLink = () => el('a', { href: '#setups', className: 'setups-link', textContent: '(see the setups)' });

function noteItem(n: TableNote): HTMLLIElement {
  const li = el('li', { className: `note-${n.kind}` });
  if (n.kind === 'point') {
    li.id = noteId(n.mark);
    li.append(el('span', { className: 'mark', textContent: `(${n.mark})` }), ' ');
  } else if (n.kind === 'warning') li.append(el('span', { className: 'mark', textContent: `[${n.mark}]` }), ' ');
  else li.append('left out: ');
  li.append(el('span', { className: 'note-text', textContent: n.text }));
  if (n.setups) li.append(' ', setupsLink());
  return li;
}

/** A file name from the two sides' labels: letters, digits, `.`, `_` and `-` only. */
function fileBase(c: Comparison): string {
  const safe = (label: string) => label.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  return `benchdrop-${safe(c.a.label)}-vs-${safe(c.b.label)}-${safe(c.metric)}`;
}

function offerDownloads(t: ComparisonTable, c: Comparison): void {
  for (const url of downloads) URL.revokeObjectURL(url);
  const base = fileBase(c);
  const link = (id: string, text: string, type: string, ext: string) => {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = $<HTMLAnchorElement>(id);
    a.href = url;
    a.download = `${base}.${ext}`;
    return url;
  };
  downloads = [
    link('download-csv', tableCsv(t), 'text/csv;charset=utf-8', 'csv'),
    link('download-md', tableMarkdown(t), 'text/markdown;charset=utf-8', 'md'),
  ];
}
