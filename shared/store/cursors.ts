/**
 * The `next` cursors of the paged answers (GET /devices, /runs, /uploads and
 * a run's samples, GET /runs/{id}/samples): where a page stopped, for the next
 * request to go on from. To a client a
 * cursor is an opaque, URL-safe string (base64url of a small JSON). When one
 * comes back it is checked like any other input: it must be one this listing
 * made, for the same filters, and its position must be of the kind the listing
 * reads (a label, an index sort key). The position is only ever a value in a
 * key condition or a start key whose partition the code chose: a cursor cannot
 * reach another kind of item, whatever it holds.
 */
import { createHash } from 'node:crypto';

/** Each paged answer, by the route that gives it (what a misplaced cursor's message names). */
const ROUTES = {
  devices: 'GET /devices',
  runs: 'GET /runs',
  uploads: 'GET /uploads',
  samples: 'GET /runs/{id}/samples',
} as const;
export type ListingName = keyof typeof ROUTES;
const isListing = (name: unknown): name is ListingName => typeof name === 'string' && Object.hasOwn(ROUTES, name);

/** What a listing's query is, as a refused cursor's message says it. */
const QUERY_WORDS: Record<ListingName, string> = {
  devices: 'other filters',
  runs: 'other filters',
  uploads: 'other filters',
  samples: 'another run, series or metric',
};

/** A cursor that is not one this listing gave for this query: a 400 saying so. */
export class CursorError extends Error {
  override readonly name = 'CursorError';
}

/** Longer than any cursor a listing makes (the longest holds a 257-character label and a 1,024-byte sort key). */
export const MAX_CURSOR_LENGTH = 4096;
const URL_SAFE = /^[A-Za-z0-9_-]+$/;

/** The filters a listing was asked with; a cursor is only good for the same ones. */
export type ListingQuery = Record<string, string | undefined>;

interface CursorBody {
  /** The listing. */
  l: ListingName;
  /** A digest of its filters. */
  q: string;
  /** Where the page stopped, as the listing wrote it. */
  p: unknown;
}

/** The filters as a short digest: a cursor carries it instead of the filters themselves, which may be long. */
function digest(name: ListingName, query: ListingQuery): string {
  const filters = Object.keys(query)
    .sort()
    .map((key) => [key, query[key] ?? null]);
  return createHash('sha256')
    .update(JSON.stringify([name, filters]))
    .digest('base64url')
    .slice(0, 12);
}

export function encodeCursor(name: ListingName, query: ListingQuery, position: unknown): string {
  const body: CursorBody = { l: name, q: digest(name, query), p: position };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

/**
 * The position in a cursor this listing gave for this query; `read` checks the
 * position's shape and returns it typed (undefined: not a position of this
 * listing). Anything else is a CursorError.
 */
export function decodeCursor<P>(
  name: ListingName,
  query: ListingQuery,
  text: string,
  read: (position: unknown) => P | undefined,
): P {
  const body = text.length <= MAX_CURSOR_LENGTH && URL_SAFE.test(text) ? parseBody(text) : undefined;
  if (body === undefined)
    throw new CursorError(
      `not a cursor of ${ROUTES[name]}: pass the next value of an answer as it came, ` +
        'or leave next out to start from the beginning',
    );
  if (body.l !== name)
    throw new CursorError(
      `a cursor of ${ROUTES[body.l]}, not of ${ROUTES[name]}: pass the next value of this listing's answer`,
    );
  if (body.q !== digest(name, query))
    throw new CursorError(
      `a cursor of this listing asked with ${QUERY_WORDS[name]}: ` +
        'ask with the same ones as the page it came from, or leave next out to start from the beginning',
    );
  const position = read(body.p);
  if (position === undefined)
    throw new CursorError(
      'not a cursor of this listing: ' +
        'pass the next value of an answer as it came, or leave next out to start from the beginning',
    );
  return position;
}

function parseBody(text: string): CursorBody | undefined {
  try {
    const body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<CursorBody> | null;
    const named = body !== null && typeof body === 'object' && isListing(body.l) && typeof body.q === 'string';
    return named ? (body as CursorBody) : undefined;
  } catch {
    return undefined;
  }
}

/** A string field of a position, when it is one (a cursor's positions are objects of strings). */
export function stringField(position: unknown, field: string): string | undefined {
  if (position === null || typeof position !== 'object' || Array.isArray(position)) return undefined;
  const value = (position as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}
