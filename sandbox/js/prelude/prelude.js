// The sandcall guest prelude. It runs in every fresh runtime before the
// program; its completion value is the ToolError constructor.
//
// A failed tool call rejects with a ToolError: an Error with the stable
// `code` of docs/errors.md, a `message`, a `hint` telling how to fix the call
// (never empty for an error from the host) and `retryable` (true only for
// transient failures). When the
// host reports them, `tool`, `path` (a JSON pointer into the arguments),
// `allowed_values`, `rule` and `reason` ("invalid_input", "transient",
// "unavailable" or "denied") are set too. A program may catch it; an uncaught
// ToolError ends the run with its code.
(function () {
  'use strict';
  class ToolError extends Error {
    constructor(message, fields) {
      super(message);
      const f = fields === undefined || fields === null ? {} : fields;
      this.code = typeof f.code === 'string' ? f.code : 'E_TOOL_FAILED';
      this.hint = typeof f.hint === 'string' ? f.hint : '';
      this.retryable = f.retryable === true;
    }
  }
  Object.defineProperty(ToolError.prototype, 'name', {
    value: 'ToolError', writable: true, enumerable: false, configurable: true,
  });
  return ToolError;
})();
