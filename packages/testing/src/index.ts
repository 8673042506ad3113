// @sluice/testing: the kit the project's own plugin tests use.

export { captureLogger } from './capture-logger.js';
export type { CapturedLogger, LogRecord } from './capture-logger.js';
export { urlElicitationOf } from './elicitation.js';
export type { UrlElicitation } from './elicitation.js';
export { FakeClock } from './fake-clock.js';
export { requestRecorder } from './request-recorder.js';
export type { RequestRecorderOptions, SeenRequest } from './request-recorder.js';
export { MetaKey, TestServer, createTestKit, errorOf, metaOf, textOf } from './kit.js';
export type { KitCallOptions, TestKit, TestKitOptions } from './kit.js';
export { VERSION } from './version.js';
