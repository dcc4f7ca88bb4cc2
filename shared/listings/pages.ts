/**
 * What every page of a listing shares: its request (a size and the cursor of
 * the page before), PageFill, which keeps a page within `limit` items and
 * MAX_PAGE_BYTES, and what a cursor's position may hold.
 */
import { FORBIDDEN_IN_LABELS } from '../labels.ts';
import { MAX_PATTERN_LENGTH } from '../selectors.ts';
import { MAX_SORT_KEY_BYTES } from '../store/keys.ts';
import { DEFAULT_PAGE, MAX_PAGE_BYTES } from '../store/pages.ts';

/** What a page is asked for: its size, and the cursor of the page before (none: the first page). */
export interface PageRequest {
  limit: number;
  next?: string;
}

/**
 * The items of one page: at most `limit`, and at most MAX_PAGE_BYTES of JSON.
 * The first item always goes in (an item is at most one DynamoDB item, 400 KB),
 * so every page moves on.
 */
export class PageFill<T> {
  readonly items: T[] = [];
  private bytes = 0;
  /** Set once an item did not fit: nothing more goes in, even a smaller one (the page keeps the listing's order). */
  private closed = false;

  constructor(readonly limit: number) {}

  /** Adds the item; false, and nothing added, when the page is full by count or size. */
  add(item: T): boolean {
    if (this.full) return false;
    const size = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
    if (this.items.length > 0 && this.bytes + size > MAX_PAGE_BYTES) {
      this.closed = true;
      return false;
    }
    this.items.push(item);
    this.bytes += size;
    return true;
  }

  get full(): boolean {
    return this.closed || this.items.length >= this.limit;
  }

  /** How many more items could go in by count. */
  get room(): number {
    return this.full ? 0 : this.limit - this.items.length;
  }
}

export const limitOf = (request: Partial<PageRequest>) => request.limit ?? DEFAULT_PAGE;

/** A label a cursor may hold: what a DEVICES entry's sort key can be. */
export const isLabelText = (text: string | undefined): text is string =>
  text !== undefined && text.length > 0 && text.length <= MAX_PATTERN_LENGTH && !FORBIDDEN_IN_LABELS.test(text);
/** An index sort key a cursor may hold (only ever compared with, in a partition the code chose). */
export const isSortKeyText = (text: string | undefined): text is string =>
  text !== undefined && text.length > 0 && Buffer.byteLength(text, 'utf8') <= MAX_SORT_KEY_BYTES;
