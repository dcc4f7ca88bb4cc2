/**
 * Solaris iostat -r (shared/parsers/iostat-solaris-csv.ts) through the full driver, on
 * cases the fixtures leave out: device names with and without commas, -M and -e
 * headers, rows that do not fit, several invocations, logs with no rows.
 */
import { describe, expect, it } from 'vitest';
import { isSolarisCsvLine } from '../../../shared/parsers/iostat-solaris-csv.ts';
import { detectedRuns, parseFails, seriesOf } from '../../support/parsed.ts';

const X_HEADER = 'device,r/s,w/s,kr/s,kw/s,wait,actv,svc_t,%w,%b,';

describe('Solaris iostat -r', () => {
  it('tells comma-separated headers from other lines', () => {
    expect(isSolarisCsvLine(X_HEADER)).toBe(true);
    expect(isSolarisCsvLine('r/s,w/s,kr/s,kw/s,wait,actv,wsvc_t,asvc_t,%w,%b,device')).toBe(true);
    expect(isSolarisCsvLine('r/s,w/s,Mr/s,Mw/s,wait,actv,wsvc_t,asvc_t,%w,%b,device')).toBe(true);
    // Space-separated -x, a column Solaris does not print, a CSV row.
    expect(isSolarisCsvLine('device    r/s  w/s   kr/s   kw/s wait actv  svc_t  %w  %b')).toBe(false);
    expect(isSolarisCsvLine('device,r/s,w/s,kr/s,kw/s,wait,actv,svc_t,%w,%util,')).toBe(false);
    expect(isSolarisCsvLine('dad0,a,0.0,0.7,0.0,5.8,0.0,0.0,4.3,0,0')).toBe(false);
  });

  it('keeps the comma of a partition name and reads each header as a report', async () => {
    const report = (w: string, kw: string) => [
      X_HEADER,
      'dad0,a,0.0,0.7,0.0,5.8,0.0,0.0,4.3,0,0',
      `dad0,f,0.0,${w},0.0,${kw},0.0,0.0,0.2,0,1`,
      'nfs1,0.1,0.0,0.8,0.0,0.0,0.0,2.9,0,0',
    ];
    const [run] = await detectedRuns(
      [...report('17.2', '89.7'), ...report('12.6', '65.6')].join('\n'),
      'iostat-solaris-csv',
    );
    expect(run!.dialect).toBe('solaris-xr');
    expect(run!.reports).toBe(2);
    expect(run!.series.map((s) => s.device)).toEqual(['dad0,a', 'dad0,f', 'nfs1']);
    const second = seriesOf(run!, 'dad0,f').samples![1]!;
    expect(second.sinceBoot).toBe(false);
    expect(second.raw).toMatchObject({ 'w/s': 12.6, 'kw/s': 65.6, svc_t: 0.2, '%b': 1 });
    expect(second.values).toMatchObject({ write_iops: 12.6, write_kBps: 65.6, service_ms: 0.2, util_pct: 1 });
    expect(seriesOf(run!, 'nfs1').samples![0]!.values).toMatchObject({ read_iops: 0.1, read_kBps: 0.8 });
  });

  it('reads -xnMer: the device last, MB/s scaled to kB/s, error counts raw', async () => {
    const text = [
      'r/s,w/s,Mr/s,Mw/s,wait,actv,wsvc_t,asvc_t,%w,%b,s/w,h/w,trn,tot,device',
      '10.0,2.0,1.5,0.25,0.0,0.4,0.0,30.1,0,21,0,0,0,0,c1t0d0',
      '0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0,0,0,3,1,4,c1t1d0',
    ];
    const [run] = await detectedRuns(text.join('\n'), 'iostat-solaris-csv');
    expect(run!.dialect).toBe('solaris-xnMer');
    const sample = seriesOf(run!, 'c1t0d0').samples![0]!;
    expect(sample.sinceBoot).toBe(true);
    expect(sample.values).toMatchObject({ read_kBps: 1536, write_kBps: 256, service_ms: 30.1, iops: 12 });
    expect(seriesOf(run!, 'c1t1d0').samples![0]!.raw).toMatchObject({ 'h/w': 3, tot: 4 });
  });

  it('skips a row with a value that is not a number, with a warning', async () => {
    const text = [X_HEADER, 'sd0,0.0,1.2,0.0,9.6,0.0,0.0,4.3,0,1', 'sd1,0.0,x,0.0,9.6,0.0,0.0,4.3,0,1'];
    const [run] = await detectedRuns(text.join('\n'), 'iostat-solaris-csv');
    expect(run!.series.map((s) => s.device)).toEqual(['sd0']);
    expect(run!.warnings).toHaveLength(1);
    expect(run!.warnings[0]!.line).toBe(3);
  });

  it('opens a new run for a command line after rows', async () => {
    const text = [
      '$ iostat -xpr 5 2',
      X_HEADER,
      'sd0,0.0,1.2,0.0,9.6,0.0,0.0,4.3,0,1',
      '$ iostat -xnr 5 2',
      'r/s,w/s,kr/s,kw/s,wait,actv,wsvc_t,asvc_t,%w,%b,device',
      '0.0,1.2,0.0,9.6,0.0,0.0,0.0,4.3,0,1,c0t0d0',
    ];
    const runs = await detectedRuns(text.join('\n'), 'iostat-solaris-csv');
    expect(runs.map((r) => r.dialect)).toEqual(['solaris-xr', 'solaris-xnr']);
    expect(runs.map((r) => r.context)).toEqual([['iostat -xpr 5 2'], ['iostat -xnr 5 2']]);
    expect(runs[1]!.startLine).toBe(4);
  });

  it('fails on a header with no rows under it, at the header', async () => {
    const error = await parseFails(['$ iostat -xpr 5 2', X_HEADER, ''].join('\n'));
    expect(error.line).toBe(2);
    expect(error.message).toContain('comma-separated iostat header with no device rows');
  });

  it('fails on rows that hold only numbers, naming the row', async () => {
    const error = await parseFails([X_HEADER, '0.0,1.2,0.0,9.6,0.0,0.0,4.3,0,1,7'].join('\n'));
    expect(error.line).toBe(2);
    expect(error.message).toContain('has no device name');
  });
});
