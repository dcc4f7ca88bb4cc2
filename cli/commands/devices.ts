/**
 * `benchdrop devices [--json]`: the labels a lab knows (GET /devices), with the
 * format of their runs and when they were last seen.
 */
import type { DeviceEntry } from '../../shared/api.ts';
import { apiClientFor, guarded, plural, shortTime, type CliDeps } from '../context.ts';
import type { Output } from '../io.ts';
import { renderTable } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface DevicesOptions extends TargetFlags {
  json?: boolean;
}

export function devicesCommand(options: DevicesOptions, io: Output, deps: CliDeps = {}): Promise<number> {
  return guarded(io, async () => {
    const api = await apiClientFor(options, deps);
    const body = await api.get<{ devices: DeviceEntry[] }>('/devices');
    if (options.json) {
      io.out(JSON.stringify(body, null, 2));
      return 0;
    }
    const devices = body.devices ?? [];
    if (devices.length === 0) {
      io.out('no devices yet: upload logs with `benchdrop upload FILE... --device LABEL`');
      return 0;
    }
    io.out(renderTable(['label', 'format', 'last seen'], devices.map((d) => [d.label, d.format, shortTime(d.lastSeen)]), ''));
    io.out(plural(devices.length, 'device'));
    return 0;
  });
}
