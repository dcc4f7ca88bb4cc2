/**
 * How large a page of a listing is (GET /devices, /runs, /uploads), defined
 * once: shared/api.ts takes them into the contract, shared/listings/ fills pages by
 * them, and the report page asks for the largest. No imports: the report page's
 * bundle takes this file as it is.
 */

/** Most items one page holds, and how many when `limit` is not given. */
export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;
/**
 * Most JSON one page's items take: the answer, `next` and all, stays under
 * 1 MB (Lambda answers at most 6 MB; a page a client can hold). A page stops at
 * the item that would not fit, and its `next` goes on from there.
 */
export const MAX_PAGE_BYTES = 900_000;
