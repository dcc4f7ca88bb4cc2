/**
 * The parsers' public face: parse a log from a stream, a file or a string, and
 * the errors that parsing ends in. The parts live in their own modules: the
 * driver (driver.ts), file reading and gunzip (input.ts), whole files and the
 * parallel path (parse-file.ts, parallel.ts), and one module per format.
 */
export { parseStream, parseText, type StreamOptions, type StreamResult } from './driver.ts';
export { InternalParseError, isInternalParseError, ParseError, isParseError, SUPPORTED_FORMATS } from './errors.ts';
export { fileChunks, READ_CHUNK_BYTES } from './input.ts';
export { parseFile, type FileOptions } from './parse-file.ts';
export type { ParserOptions } from './types.ts';
