/**
 * `benchdrop devices [--json]`: every label a lab knows (GET /devices, page after
 * page), with the format of their runs and when they were last seen.
 */
import type { DeviceEntry } from '../../shared/api.ts';
import { plural } from '../../shared/comparison/format.ts';
import { apiClientFor, guarded, NO_LOGS_YET, shortTime, type CliDeps } from '../context.ts';
import type { Output } from '../io.ts';
import { renderTable } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface DevicesOptions extends TargetFlags {
  json?: boolean;
}

export function devicesCommand(options: DevicesOptions, io: Output, deps: CliDeps = {}): Promise<number> {
  return guarded(io, async () => {
    const api = await apiClientFor(options, deps, io);
    // The labels are what selectors are written from: all of them, however many pages they take.
    const { items: devices } = await api.list<DeviceEntry>('/devices', 'devices');
    if (options.json) {
      io.out(JSON.stringify({ devices }, null, 2));
      return 0;
    }
    if (devices.length === 0) {
      io.out(`no devices yet: ${NO_LOGS_YET}`);
      return 0;
    }
    io.out(
      renderTable(
        ['label', 'format', 'last seen'],
        devices.map((d) => [d.label, d.format, shortTime(d.lastSeen)]),
        '',
      ),
    );
    io.out(plural(devices.length, 'device'));
    return 0;
  });
}
