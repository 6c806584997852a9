// Reads a server-sent event stream from a fetch() Response body.
//
// ragd streams `data: <json>\n\n` events and ends with `data: [DONE]\n\n`
// (docs/api.md). This reader accepts the general SSE framing: CRLF or LF
// line ends, comment lines (":"), other fields (ignored) and multi-line
// data (joined with "\n"). Each complete event's data is passed to onData
// as a string; "[DONE]" is passed too, so the caller decides what it means.
"use strict";

(function (root) {
  var Ragd = root.Ragd || (root.Ragd = {});

  // Incremental parser: push(chunkText) any number of times, then end().
  function SseParser(onData) {
    this.onData = onData;
    this.buffer = "";
    this.data = null;  // data lines of the event being read
  }

  SseParser.prototype.push = function (text) {
    this.buffer += text;
    var start = 0;
    for (;;) {
      var nl = this.buffer.indexOf("\n", start);
      var cr = this.buffer.indexOf("\r", start);
      var end = nl < 0 ? cr : cr < 0 ? nl : Math.min(nl, cr);
      if (end < 0) break;
      // A lone "\r" at the end of the buffer may be the first half of "\r\n".
      if (end === cr && end === this.buffer.length - 1) break;
      var line = this.buffer.slice(start, end);
      start = end + (this.buffer[end] === "\r" && this.buffer[end + 1] === "\n" ? 2 : 1);
      this.line(line);
    }
    this.buffer = this.buffer.slice(start);
  };

  SseParser.prototype.line = function (line) {
    if (line === "") {
      if (this.data !== null) {
        var data = this.data.join("\n");
        this.data = null;
        this.onData(data);
      }
      return;
    }
    if (line[0] === ":") return;
    var colon = line.indexOf(":");
    var field = colon < 0 ? line : line.slice(0, colon);
    var value = colon < 0 ? "" : line.slice(colon + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "data") (this.data || (this.data = [])).push(value);
  };

  // Flushes a last event that was not followed by a blank line.
  SseParser.prototype.end = function () {
    if (this.buffer !== "") {
      var rest = this.buffer;
      this.buffer = "";
      this.line(rest.replace(/\r$/, ""));
    }
    this.line("");
  };

  Ragd.SseParser = SseParser;

  // Reads `response.body` to the end, calling onData(string) per event.
  // Resolves when the stream ends; rejects on network errors or abort.
  Ragd.readSse = async function (response, onData) {
    var parser = new SseParser(onData);
    var reader = response.body.getReader();
    var decoder = new TextDecoder("utf-8");
    try {
      for (;;) {
        var step = await reader.read();
        if (step.done) break;
        parser.push(decoder.decode(step.value, { stream: true }));
      }
      parser.push(decoder.decode());
      parser.end();
    } finally {
      try {
        reader.releaseLock();
      } catch (e) {
        // The lock is already gone when the read was aborted.
      }
    }
  };
})(typeof window !== "undefined" ? window : globalThis);
