/**
 * GET /devices: the DEVICES partition in label order, `limit` + 1 labels from
 * the cursor's label on (one Query): the one more says whether there is a next page.
 */
import type { DeviceEntry, DevicesPage } from '../api.ts';
import { decodeCursor, encodeCursor, stringField, type ListingQuery } from '../store/cursors.ts';
import { MAX_PAGE } from '../store/pages.ts';
import { deviceEntries } from '../store/reads.ts';
import type { ReadStore } from '../store/store.ts';
import { isLabelText, limitOf, PageFill, type PageRequest } from './pages.ts';

interface DevicesPosition {
  /** The last label of the page before. */
  after: string;
}

const readDevicesPosition = (p: unknown): DevicesPosition | undefined => {
  const after = stringField(p, 'after');
  return isLabelText(after) ? { after } : undefined;
};

/** One page of device labels, in label order. */
export async function pageDevices(store: ReadStore, request: Partial<PageRequest> = {}): Promise<DevicesPage> {
  const query: ListingQuery = {};
  const from =
    request.next !== undefined ? decodeCursor('devices', query, request.next, readDevicesPosition) : undefined;
  const limit = limitOf(request);
  const items = await deviceEntries(store, limit + 1, from?.after);
  const fill = new PageFill<DeviceEntry>(limit);
  const labels: string[] = [];
  for (const i of items) {
    if (!fill.add({ label: i.label ?? i.sk, format: i.format ?? 'unknown', lastSeen: i.lastSeen ?? '' })) break;
    labels.push(i.sk);
  }
  const more = labels.length < items.length;
  return {
    devices: fill.items,
    ...(more ? { next: encodeCursor('devices', query, { after: labels.at(-1)! } satisfies DevicesPosition) } : {}),
  };
}

/** Every device label, page after page (tests and tools; the API answers one page). */
export async function listDevices(store: ReadStore): Promise<DeviceEntry[]> {
  const all: DeviceEntry[] = [];
  let next: string | undefined;
  do {
    const page = await pageDevices(store, { limit: MAX_PAGE, ...(next ? { next } : {}) });
    all.push(...page.devices);
    next = page.next;
  } while (next);
  return all;
}
