/** The few DOM helpers the report page's modules share. */

/** The page's element of this id (the page's own markup, report/build.ts, holds every one asked for). */
export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** A table row of text cells. */
export function row(cell: 'td' | 'th', texts: readonly string[], className?: string): HTMLTableRowElement {
  const tr = el('tr', className ? { className } : {});
  tr.append(...texts.map((text) => el(cell, { textContent: text })));
  return tr;
}
