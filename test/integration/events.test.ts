/**
 * infra/local/events.ts builds the events the integration tests and the local lab
 * feed the ingest handler: they must look like what S3 and SQS really send.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { objectRefOf } from '../../shared/ingest.ts';
import { decodeKey } from '../../shared/ingest/s3-event.ts';
import {
  encodeEventKey,
  s3EventRecord,
  s3Notification,
  s3TestEvent,
  sequencerGenerator,
  sqsEvent,
} from '../../infra/local/events.ts';

describe('S3 event records', () => {
  it('encode keys as S3 does: percent-escapes, + for spaces, / kept; ingestion decodes them back', () => {
    const cases: [string, string][] = [
      ['sas10k/run1.txt', 'sas10k/run1.txt'],
      ['my disks/Café run 1.txt', 'my+disks/Caf%C3%A9+run+1.txt'],
      ['a+b/100% (x).txt', 'a%2Bb/100%25+(x).txt'],
      ['x=1&y=2?.txt', 'x%3D1%26y%3D2%3F.txt'],
      ['日本/ディスク.txt', '%E6%97%A5%E6%9C%AC/%E3%83%87%E3%82%A3%E3%82%B9%E3%82%AF.txt'],
    ];
    for (const [key, encoded] of cases) {
      expect(encodeEventKey(key)).toBe(encoded);
      expect(decodeKey(encodeEventKey(key))).toBe(key);
    }
  });

  it('an ObjectCreated record has the full S3 shape, eTag without quotes', () => {
    const record = s3EventRecord({
      eventName: 'ObjectCreated:Put',
      bucket: 'uploads',
      key: 'my disks/a.txt',
      size: 1503,
      eTag: '"0123456789abcdef0123456789abcdef"',
      sequencer: '0062E99A88DC407460',
    });
    expect(record).toEqual({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: 'us-east-1',
      eventTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      eventName: 'ObjectCreated:Put',
      userIdentity: { principalId: expect.stringMatching(/^AWS:AIDA[A-Z0-9]{17}$/) },
      requestParameters: { sourceIPAddress: '127.0.0.1' },
      responseElements: {
        'x-amz-request-id': expect.stringMatching(/^[0-9A-F]{16}$/),
        'x-amz-id-2': expect.stringMatching(/^[A-Za-z0-9+/]{76}$/),
      },
      s3: {
        s3SchemaVersion: '1.0',
        configurationId: 'benchdrop-ingest',
        bucket: {
          name: 'uploads',
          ownerIdentity: { principalId: expect.stringMatching(/^[A-Z0-9]{14}$/) },
          arn: 'arn:aws:s3:::uploads',
        },
        object: {
          key: 'my+disks/a.txt',
          size: 1503,
          eTag: '0123456789abcdef0123456789abcdef',
          sequencer: '0062E99A88DC407460',
        },
      },
    });
    expect(Object.keys(record.s3.object)).toEqual(['key', 'size', 'eTag', 'sequencer']);
    expect(objectRefOf(record)).toEqual({
      bucket: 'uploads',
      key: 'my disks/a.txt',
      version: '0123456789abcdef0123456789abcdef.0062E99A88DC407460',
      eTag: '0123456789abcdef0123456789abcdef',
      size: 1503,
      sequencer: '0062E99A88DC407460',
    });
  });

  it('versionId only when given; removals carry no size or eTag; created events must have both', () => {
    const versioned = s3EventRecord({
      eventName: 'ObjectCreated:CompleteMultipartUpload',
      bucket: 'b',
      key: 'k',
      size: 1,
      eTag: 'abc-2',
      versionId: '3HL4kqtJlcpXroDTDmjVBH40Nrjfkd',
    });
    expect(Object.keys(versioned.s3.object)).toEqual(['key', 'size', 'eTag', 'versionId', 'sequencer']);
    const marker = s3EventRecord({
      eventName: 'ObjectRemoved:DeleteMarkerCreated',
      bucket: 'b',
      key: 'k',
      versionId: 'dm1',
      size: 5,
      eTag: 'x',
    });
    expect(Object.keys(marker.s3.object)).toEqual(['key', 'versionId', 'sequencer']);
    const deleted = s3EventRecord({ eventName: 'ObjectRemoved:Delete', bucket: 'b', key: 'a b' });
    expect(deleted.s3.object).toEqual({ key: 'a+b', sequencer: expect.stringMatching(/^[0-9A-F]{18}$/) });
    expect(() => s3EventRecord({ eventName: 'ObjectCreated:Put', bucket: 'b', key: 'k' })).toThrow(/size and eTag/);
    expect(() => s3EventRecord({ eventName: 'ObjectRemoved:Delete', bucket: 'b', key: 'k', sequencer: 'abc' })).toThrow(
      /upper-case hex/,
    );
  });

  it('sequencers are upper-case hex and grow with every event, also compared as S3 says (left-padded)', () => {
    const next = sequencerGenerator(0xfffen);
    const values = Array.from({ length: 5 }, () => next());
    expect(values[0]).toBe('00000000000000FFFE');
    expect(values[2]).toBe('000000000000010000');
    for (let i = 1; i < values.length; i++) expect(values[i]! > values[i - 1]!).toBe(true);
    const clock = sequencerGenerator();
    const a = clock();
    const b = clock();
    expect(a).toMatch(/^[0-9A-F]{18}$/);
    expect(BigInt(`0x${b}`) - BigInt(`0x${a}`)).toBe(1n);
  });

  it('the test event has the shape S3 sends when a notification is configured', () => {
    expect(s3TestEvent('uploads', '2024-01-01T00:00:00Z')).toEqual({
      Service: 'Amazon S3',
      Event: 's3:TestEvent',
      Time: '2024-01-01T00:00:00.000Z',
      Bucket: 'uploads',
      RequestId: expect.stringMatching(/^[0-9A-F]{16}$/),
      HostId: expect.any(String),
    });
  });
});

describe('SQS events', () => {
  it('wraps each body in an SQS record with real fields and the md5 of the body', () => {
    const record = s3EventRecord({ eventName: 'ObjectCreated:Put', bucket: 'b', key: 'k', size: 1, eTag: 'e' });
    const event = sqsEvent([record, s3Notification(record), s3TestEvent('b'), 'not json'], {
      receiveCount: 2,
      sentAt: new Date(1_700_000_000_000),
    });
    expect(event.Records).toHaveLength(4);
    // A bare record is sent as S3 sends it: inside a notification.
    expect(JSON.parse(event.Records[0]!.body)).toEqual({ Records: [record] });
    expect(event.Records[0]!.body).toBe(event.Records[1]!.body);
    expect(event.Records[3]!.body).toBe('not json');
    for (const r of event.Records) {
      expect(r).toEqual({
        messageId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        receiptHandle: expect.stringMatching(/^AQEB[A-Za-z0-9+/=]{100,}$/),
        body: expect.any(String),
        attributes: {
          ApproximateReceiveCount: '2',
          SentTimestamp: '1700000000000',
          SenderId: expect.stringMatching(/^AIDA[A-Z0-9]{17}$/),
          ApproximateFirstReceiveTimestamp: '1700000000007',
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(r.body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:benchdrop-ingest',
        awsRegion: 'us-east-1',
      });
    }
    expect(new Set(event.Records.map((r) => r.messageId)).size).toBe(4);
  });

  it('keeps given message ids (a redelivery) and region', () => {
    const event = sqsEvent(['a', 'b'], { messageIds: ['m-1', 'm-2'], region: 'eu-west-1' });
    expect(event.Records.map((r) => [r.messageId, r.awsRegion, r.eventSourceARN])).toEqual([
      ['m-1', 'eu-west-1', 'arn:aws:sqs:eu-west-1:123456789012:benchdrop-ingest'],
      ['m-2', 'eu-west-1', 'arn:aws:sqs:eu-west-1:123456789012:benchdrop-ingest'],
    ]);
  });
});
