/**
 * Generated logs for the tests that need more than a fixture: long Solaris
 * `iostat -xn` sessions (many reports, many devices). Values are deterministic
 * and internally consistent (kw/s = w/s x 8 kB requests), so a test can compute
 * what the parser must find.
 */

export interface SolarisLogOptions {
  reports: number;
  devices: string[];
  interval?: number;
  host?: string;
}

/** w/s of one device in one report: varies with both, never the same twice in a row. */
export function writeIops(report: number, device: number): number {
  return Math.round((100 + device * 10 + ((report * 37) % 101)) * 10) / 10;
}

/** An `iostat -xn <interval> <reports>` session as Solaris 10 prints it. */
export function solarisIostatLog(options: SolarisLogOptions): string {
  const interval = options.interval ?? 5;
  const lines: string[] = [];
  if (options.host) lines.push(`${options.host}# iostat -xn ${interval} ${options.reports}`);
  else lines.push(`iostat -xn ${interval} ${options.reports}`);
  for (let r = 0; r < options.reports; r++) {
    lines.push('                    extended device statistics              ');
    lines.push('    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device');
    options.devices.forEach((device, d) => {
      const w = writeIops(r, d);
      const kw = (w * 8).toFixed(1);
      const row = [
        ' 0.0',
        w.toFixed(1).padStart(6),
        '0.0'.padStart(6),
        kw.padStart(6),
        ' 0.0',
        ' 1.2',
        '   0.0',
        '   9.8',
        '  0',
        ` ${String(40 + (d % 50)).padStart(2)}`,
        device,
      ];
      lines.push(`   ${row.join(' ')}`);
    });
  }
  return `${lines.join('\n')}\n`;
}

/** Solaris-style device names: c<controller>t<target>d0. */
export function solarisDevices(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `c${Math.floor(i / 16) + 1}t${i % 16}d0`);
}
