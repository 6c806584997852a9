// A small, safe Markdown renderer for model answers.
//
// Two steps: parseMarkdown(text) turns the text into a plain tree of objects
// (no DOM, so it can be tested outside a browser), and renderMarkdown(text,
// options) builds DOM nodes from that tree with createElement/textContent
// only. No text from the model or from documents ever reaches innerHTML, so
// it cannot inject markup or script. Links are kept only for absolute http(s)
// URLs; images are shown as links, never loaded.
//
// Supported: paragraphs (single newlines are line breaks), ATX and setext
// headings, fenced code blocks, bullet and numbered lists (nested),
// blockquotes, horizontal rules, pipe tables, **bold**, *italic*, ~~strike~~,
// `code`, [links](https://…), <https://…> and bare https:// URLs, backslash
// escapes, and citation markers [1] / [1, 2] (shown as chips when the
// caller knows the number).
//
// Tree nodes. Blocks: {t:"p",c}, {t:"h",level,c}, {t:"code",lang,text},
// {t:"list",ordered,start,tight,items:[[block]]}, {t:"quote",c:[block]},
// {t:"hr"}, {t:"table",align,head:[[inline]],rows:[[[inline]]]}.
// Inlines: {t:"text",v}, {t:"br"}, {t:"strong",c}, {t:"em",c}, {t:"del",c},
// {t:"code",v}, {t:"link",href,c}, {t:"cite",nums,raw}.
"use strict";

(function (root) {
  var Ragd = root.Ragd || (root.Ragd = {});

  // ---------------------------------------------------------------- blocks

  var FENCE_RE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
  // Only the opening of an ATX heading: its text and closing #s are cut by
  // parseHeading in one pass. A single regex with a lazy text group before
  // optional closing #s backtracks quadratically on a long line of spaces
  // (a crafted answer froze the tab).
  var HEADING_RE = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
  var HR_RE = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
  var SETEXT_RE = /^ {0,3}(=+|-+)[ \t]*$/;
  var QUOTE_RE = /^ {0,3}> ?(.*)$/;
  var LIST_RE = /^( *)([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
  var TABLE_DELIM_RE = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

  function isSpace(c) {
    return c === " " || c === "\t";
  }

  // An ATX heading's level and text, or null: "## Title ##" -> {2, "Title"}.
  function parseHeading(line) {
    var m = HEADING_RE.exec(line);
    if (!m) return null;
    var rest = line.slice(m[0].length);
    var end = rest.length;
    while (end > 0 && isSpace(rest[end - 1])) end--;
    var hashes = end;
    while (hashes > 0 && rest[hashes - 1] === "#") hashes--;
    // A closing sequence of #s counts only after a space (or alone).
    if (hashes < end && (hashes === 0 || isSpace(rest[hashes - 1]))) end = hashes;
    var start = 0;
    while (start < end && isSpace(rest[start])) start++;
    while (end > start && isSpace(rest[end - 1])) end--;
    return { level: m[1].length, text: rest.slice(start, end) };
  }

  function isBlank(line) {
    return /^[ \t]*$/.test(line);
  }

  function indentOf(line) {
    return line.length - line.replace(/^ +/, "").length;
  }

  function expandTabs(line) {
    if (line.indexOf("\t") < 0) return line;
    var out = "";
    for (var i = 0; i < line.length; i++) {
      var ch = line[i];
      if (ch === "\t") out += "    ".slice(out.length % 4);
      else out += ch;
    }
    return out;
  }

  // True when `line` starts a block that ends a paragraph or lazy continuation.
  function startsBlock(line) {
    return FENCE_RE.test(line) || HEADING_RE.test(line) || HR_RE.test(line) ||
      QUOTE_RE.test(line) || LIST_RE.test(line);
  }

  function splitRow(line) {
    var s = line.trim();
    if (s[0] === "|") s = s.slice(1);
    if (s[s.length - 1] === "|" && s[s.length - 2] !== "\\") s = s.slice(0, -1);
    var cells = [];
    var cur = "";
    for (var i = 0; i < s.length; i++) {
      if (s[i] === "\\" && s[i + 1] === "|") {
        cur += "|";
        i++;
      } else if (s[i] === "|") {
        cells.push(cur.trim());
        cur = "";
      } else {
        cur += s[i];
      }
    }
    cells.push(cur.trim());
    return cells;
  }

  function parseTable(lines, i) {
    var head = splitRow(lines[i]);
    var align = splitRow(lines[i + 1]).map(function (d) {
      var left = d[0] === ":";
      var right = d[d.length - 1] === ":";
      return left && right ? "center" : right ? "right" : left ? "left" : "";
    });
    var rows = [];
    var j = i + 2;
    while (j < lines.length && !isBlank(lines[j]) && lines[j].indexOf("|") >= 0 && !startsBlock(lines[j])) {
      rows.push(splitRow(lines[j]));
      j++;
    }
    var width = head.length;
    function cellsOf(row) {
      var out = [];
      for (var k = 0; k < width; k++) out.push(parseInline(row[k] || ""));
      return out;
    }
    return {
      node: { t: "table", align: align.slice(0, width), head: cellsOf(head), rows: rows.map(cellsOf) },
      next: j,
    };
  }

  function parseList(lines, i) {
    var first = LIST_RE.exec(lines[i]);
    var ordered = /\d/.test(first[2]);
    var delim = ordered ? first[2].slice(-1) : first[2];
    var baseIndent = first[1].length;
    var items = [];
    var tight = true;
    while (i < lines.length) {
      var m = LIST_RE.exec(lines[i]);
      if (!m || /\d/.test(m[2]) !== ordered || (ordered ? m[2].slice(-1) : m[2]) !== delim) break;
      if (m[1].length > baseIndent + 3) break;
      var markerIndent = m[1].length;
      var gap = m[3].length;
      var contentIndent = markerIndent + m[2].length + (gap >= 1 && gap <= 4 ? gap : 1);
      var itemLines = [m[4]];
      i++;
      while (i < lines.length) {
        var l = lines[i];
        if (isBlank(l)) {
          var j = i;
          while (j < lines.length && isBlank(lines[j])) j++;
          if (j < lines.length && indentOf(lines[j]) >= contentIndent) {
            for (; i < j; i++) itemLines.push("");
            tight = false;
            continue;
          }
          break;
        }
        var ind = indentOf(l);
        if (ind >= contentIndent) {
          itemLines.push(l.slice(contentIndent));
        } else if (LIST_RE.test(l) && ind > markerIndent) {
          itemLines.push(l.slice(ind));  // nested list indented less than the text
        } else if (LIST_RE.test(l) || startsBlock(l)) {
          break;
        } else {
          itemLines.push(l.trim());  // lazy continuation of the item's paragraph
        }
        i++;
      }
      items.push(parseBlocks(itemLines));
      var k = i;
      while (k < lines.length && isBlank(lines[k])) k++;
      var next = k < lines.length ? LIST_RE.exec(lines[k]) : null;
      if (!next || next[1].length > baseIndent + 3 || /\d/.test(next[2]) !== ordered ||
          (ordered ? next[2].slice(-1) : next[2]) !== delim) {
        break;
      }
      if (k > i) tight = false;
      i = k;
    }
    var start = ordered ? parseInt(first[2], 10) : 1;
    return { node: { t: "list", ordered: ordered, start: start, tight: tight, items: items }, next: i };
  }

  function parseBlocks(lines) {
    var blocks = [];
    var para = [];
    function flush() {
      if (para.length) {
        blocks.push({ t: "p", c: parseInline(para.join("\n")) });
        para = [];
      }
    }
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      if (isBlank(line)) {
        flush();
        i++;
        continue;
      }
      var m;
      if ((m = FENCE_RE.exec(line))) {
        flush();
        var fence = m[1];
        var closeRe = new RegExp("^ {0,3}" + (fence[0] === "`" ? "`" : "~") + "{" + fence.length + ",}[ \\t]*$");
        var fenceIndent = indentOf(line);
        var body = [];
        i++;
        while (i < lines.length && !closeRe.test(lines[i])) {
          var b = lines[i];
          body.push(b.slice(Math.min(fenceIndent, indentOf(b))));
          i++;
        }
        i++;  // the closing fence (or past the end while streaming)
        blocks.push({ t: "code", lang: m[2] || "", text: body.join("\n") });
        continue;
      }
      if (para.length && (m = SETEXT_RE.exec(line))) {
        var text = para.join("\n");
        para = [];
        blocks.push({ t: "h", level: m[1][0] === "=" ? 1 : 2, c: parseInline(text) });
        i++;
        continue;
      }
      if ((m = parseHeading(line))) {
        flush();
        blocks.push({ t: "h", level: m.level, c: parseInline(m.text) });
        i++;
        continue;
      }
      if (HR_RE.test(line)) {
        flush();
        blocks.push({ t: "hr" });
        i++;
        continue;
      }
      if (QUOTE_RE.test(line)) {
        flush();
        var quoted = [];
        while (i < lines.length && (m = QUOTE_RE.exec(lines[i]))) {
          quoted.push(m[1]);
          i++;
        }
        blocks.push({ t: "quote", c: parseBlocks(quoted) });
        continue;
      }
      if ((m = LIST_RE.exec(line)) && !(isBlank(m[4]) && para.length)) {
        flush();
        var list = parseList(lines, i);
        blocks.push(list.node);
        i = list.next;
        continue;
      }
      if (line.indexOf("|") >= 0 && i + 1 < lines.length && TABLE_DELIM_RE.test(lines[i + 1]) &&
          lines[i + 1].indexOf("-") >= 0 && (lines[i + 1].indexOf("|") >= 0 || line.trim()[0] === "|")) {
        flush();
        var table = parseTable(lines, i);
        blocks.push(table.node);
        i = table.next;
        continue;
      }
      para.push(line.replace(/^ +/, ""));
      i++;
    }
    flush();
    return blocks;
  }

  // --------------------------------------------------------------- inlines

  var PUNCT_RE = /[!-\/:-@\[-`{-~]/;
  // Sticky patterns, matched at a position with matchAt().
  var CITE_Y = /\[(\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*)\]/y;
  var BARE_URL_Y = /https?:\/\/[^\s<>"'`]+/iy;
  var AUTOLINK_Y = /<(https?:\/\/[^\s<>]+)>/iy;
  var BACKTICKS_Y = /`+/y;
  var LINK_TARGET_Y = /\(\s*<?([^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/y;
  var ALNUM_RE = /[0-9A-Za-z\u00C0-\uFFFF]/;
  // Longest link label and emphasis span searched for; bounds the work on
  // pathological text (many unmatched "[" or "*") to linear in its length.
  var MAX_LABEL = 1000;
  var MAX_SPAN = 3000;

  function matchAt(re, s, pos) {
    re.lastIndex = pos;
    return re.exec(s);
  }

  // Index of the "]" closing the "[" at `open`, or -1.
  function closingBracket(s, open) {
    var depth = 0;
    var stop = Math.min(s.length, open + MAX_LABEL);
    for (var i = open; i < stop; i++) {
      var c = s[i];
      if (c === "\\") {
        i++;
      } else if (c === "[") {
        depth++;
      } else if (c === "]") {
        depth--;
        if (depth === 0) return i;
      } else if (c === "`") {
        var run = matchAt(BACKTICKS_Y, s, i)[0];
        var end = s.indexOf(run, i + run.length);
        if (end > 0) i = end + run.length - 1;
      }
    }
    return -1;
  }

  // Parses "(url "title")" at `pos`; returns {href, next} or null.
  function linkTarget(s, pos) {
    if (s[pos] !== "(") return null;
    var m = matchAt(LINK_TARGET_Y, s, pos);
    if (!m) return null;
    return { href: m[1], next: pos + m[0].length };
  }

  // Finds the closing delimiter for an emphasis opener of `count` chars `ch`.
  // `failed` remembers, per delimiter kind, a position from which a scan to
  // the end found no closer, so later openers of that kind give up at once.
  function closingEmphasis(s, from, ch, count, failed) {
    var key = ch + count;
    if (failed[key] !== undefined && from >= failed[key]) return -1;
    var stop = Math.min(s.length, from + MAX_SPAN);
    for (var j = from; j < stop; j++) {
      var c = s[j];
      if (c === "\\") {
        j++;
        continue;
      }
      if (c === "`") {
        var run = matchAt(BACKTICKS_Y, s, j)[0];
        var end = s.indexOf(run, j + run.length);
        if (end > 0) j = end + run.length - 1;
        continue;
      }
      if (c !== ch) continue;
      var k = j;
      while (k < s.length && s[k] === ch) k++;
      var len = k - j;
      var before = s[j - 1];
      var after = s[k];
      var closes = j > from && before !== undefined && !/\s/.test(before) &&
        (ch !== "_" || after === undefined || !ALNUM_RE.test(after));
      if (closes && (len === count || (count === 1 && len === 3) || (count === 2 && len === 3))) {
        return j + (len === count ? 0 : len - count);
      }
      j = k - 1;
    }
    if (stop === s.length) failed[key] = Math.min(from, failed[key] === undefined ? from : failed[key]);
    return -1;
  }

  function trimUrl(url) {
    // Trailing punctuation belongs to the sentence, not to the URL.
    while (/[.,;:!?'")\]*_]$/.test(url)) {
      if (url[url.length - 1] === ")" && (url.match(/\(/g) || []).length >= (url.match(/\)/g) || []).length) break;
      url = url.slice(0, -1);
    }
    return url;
  }

  function parseInline(s) {
    var failed = {};
    var out = [];
    var buf = "";
    function text() {
      if (buf) {
        out.push({ t: "text", v: buf });
        buf = "";
      }
    }
    var i = 0;
    while (i < s.length) {
      var c = s[i];
      var m;
      if (c === "\\" && i + 1 < s.length && PUNCT_RE.test(s[i + 1])) {
        buf += s[i + 1];
        i += 2;
        continue;
      }
      if (c === "\n") {
        buf = buf.replace(/[ \t]+$/, "");
        text();
        out.push({ t: "br" });
        i++;
        while (s[i] === " ") i++;
        continue;
      }
      if (c === "`") {
        var run = matchAt(BACKTICKS_Y, s, i)[0];
        var end = s.indexOf(run, i + run.length);
        while (end > 0 && s[end + run.length] === "`") end = s.indexOf(run, end + run.length + 1);
        if (end > 0) {
          text();
          var code = s.slice(i + run.length, end).replace(/\n/g, " ");
          if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
          out.push({ t: "code", v: code });
          i = end + run.length;
        } else {
          buf += run;
          i += run.length;
        }
        continue;
      }
      if (c === "[" && (m = matchAt(CITE_Y, s, i)) && s[i + m[0].length] !== "(") {
        text();
        var nums = m[1].split(",").map(function (x) { return parseInt(x, 10); });
        out.push({ t: "cite", nums: nums, raw: m[0] });
        i += m[0].length;
        continue;
      }
      if (c === "[" || (c === "!" && s[i + 1] === "[")) {
        var open = c === "!" ? i + 1 : i;
        var close = closingBracket(s, open);
        var target = close > 0 ? linkTarget(s, close + 1) : null;
        if (target) {
          text();
          out.push({ t: "link", href: target.href, c: parseInline(s.slice(open + 1, close)) });
          i = target.next;
          continue;
        }
        buf += c;
        i++;
        continue;
      }
      if (c === "<" && (m = matchAt(AUTOLINK_Y, s, i))) {
        text();
        out.push({ t: "link", href: m[1], c: [{ t: "text", v: m[1] }] });
        i += m[0].length;
        continue;
      }
      if ((c === "h" || c === "H") && (i === 0 || !ALNUM_RE.test(s[i - 1])) &&
          (m = matchAt(BARE_URL_Y, s, i))) {
        var url = trimUrl(m[0]);
        if (/^https?:\/\/./i.test(url)) {
          text();
          out.push({ t: "link", href: url, c: [{ t: "text", v: url }] });
          i += url.length;
          continue;
        }
      }
      if (c === "~" && s[i + 1] === "~" && s[i + 2] !== "~" && s[i + 2] !== undefined && !/\s/.test(s[i + 2])) {
        var dclose = s.indexOf("~~", i + 3);
        if (dclose > 0 && !/\s/.test(s[dclose - 1])) {
          text();
          out.push({ t: "del", c: parseInline(s.slice(i + 2, dclose)) });
          i = dclose + 2;
          continue;
        }
      }
      if (c === "*" || c === "_") {
        var k = i;
        while (k < s.length && s[k] === c) k++;
        var len = k - i;
        var next = s[k];
        var prev = s[i - 1];
        var canOpen = len <= 3 && next !== undefined && !/\s/.test(next) &&
          (c !== "_" || prev === undefined || !ALNUM_RE.test(prev));
        if (canOpen) {
          var closeAt = closingEmphasis(s, k, c, len, failed);
          if (closeAt > 0) {
            text();
            var inner = parseInline(s.slice(k, closeAt));
            var node = len === 1 ? { t: "em", c: inner }
              : len === 2 ? { t: "strong", c: inner }
              : { t: "strong", c: [{ t: "em", c: inner }] };
            out.push(node);
            i = closeAt + len;
            continue;
          }
        }
        buf += s.slice(i, k);
        i = k;
        continue;
      }
      buf += c;
      i++;
    }
    text();
    return out;
  }

  Ragd.parseMarkdown = function (text) {
    var lines = String(text || "").replace(/\r\n?/g, "\n").split("\n").map(expandTabs);
    return parseBlocks(lines);
  };
  Ragd.parseInline = parseInline;

  // ------------------------------------------------------------------- DOM

  // Returns the URL as a string when it is an absolute http(s) URL, else null.
  function safeHref(href) {
    if (!/^https?:\/\//i.test(href)) return null;
    try {
      var u = new URL(href);
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch (e) {
      return null;
    }
  }
  Ragd.safeHref = safeHref;

  function buildInlines(doc, parent, nodes, opts) {
    nodes.forEach(function (n) {
      var e;
      switch (n.t) {
        case "text":
          parent.appendChild(doc.createTextNode(n.v));
          break;
        case "br":
          parent.appendChild(doc.createElement("br"));
          break;
        case "code":
          e = doc.createElement("code");
          e.textContent = n.v;
          parent.appendChild(e);
          break;
        case "strong":
        case "em":
        case "del":
          e = doc.createElement(n.t);
          buildInlines(doc, e, n.c, opts);
          parent.appendChild(e);
          break;
        case "link":
          var href = safeHref(n.href);
          if (href === null) {
            buildInlines(doc, parent, n.c, opts);
            break;
          }
          e = doc.createElement("a");
          e.href = href;
          e.rel = "noopener noreferrer nofollow";
          e.target = "_blank";
          buildInlines(doc, e, n.c.length ? n.c : [{ t: "text", v: href }], opts);
          parent.appendChild(e);
          break;
        case "cite":
          var made = false;
          var chips = n.nums.map(function (num) {
            var chip = opts.citation ? opts.citation(num) : null;
            if (chip) made = true;
            return chip;
          });
          if (!made) {
            parent.appendChild(doc.createTextNode(n.raw));
            break;
          }
          chips.forEach(function (chip, idx) {
            parent.appendChild(chip || doc.createTextNode("[" + n.nums[idx] + "]"));
          });
          break;
      }
    });
  }

  function buildBlocks(doc, parent, blocks, opts) {
    blocks.forEach(function (b) {
      var e;
      switch (b.t) {
        case "p":
          e = doc.createElement("p");
          buildInlines(doc, e, b.c, opts);
          break;
        case "h":
          e = doc.createElement("h" + b.level);
          buildInlines(doc, e, b.c, opts);
          break;
        case "code":
          e = doc.createElement("pre");
          var code = doc.createElement("code");
          if (b.lang) code.setAttribute("data-lang", b.lang);
          code.textContent = b.text;
          e.appendChild(code);
          break;
        case "hr":
          e = doc.createElement("hr");
          break;
        case "quote":
          e = doc.createElement("blockquote");
          buildBlocks(doc, e, b.c, opts);
          break;
        case "list":
          e = doc.createElement(b.ordered ? "ol" : "ul");
          if (b.ordered && b.start !== 1) e.setAttribute("start", String(b.start));
          b.items.forEach(function (item) {
            var li = doc.createElement("li");
            if (b.tight && item.length && item[0].t === "p") {
              buildInlines(doc, li, item[0].c, opts);
              buildBlocks(doc, li, item.slice(1), opts);
            } else {
              buildBlocks(doc, li, item, opts);
            }
            e.appendChild(li);
          });
          break;
        case "table":
          e = doc.createElement("table");
          var thead = doc.createElement("thead");
          var hr = doc.createElement("tr");
          b.head.forEach(function (cell, idx) {
            var th = doc.createElement("th");
            if (b.align[idx]) th.style.textAlign = b.align[idx];
            buildInlines(doc, th, cell, opts);
            hr.appendChild(th);
          });
          thead.appendChild(hr);
          e.appendChild(thead);
          var tbody = doc.createElement("tbody");
          b.rows.forEach(function (row) {
            var tr = doc.createElement("tr");
            row.forEach(function (cell, idx) {
              var td = doc.createElement("td");
              if (b.align[idx]) td.style.textAlign = b.align[idx];
              buildInlines(doc, td, cell, opts);
              tr.appendChild(td);
            });
            tbody.appendChild(tr);
          });
          e.appendChild(tbody);
          break;
      }
      if (e) parent.appendChild(e);
    });
  }

  // Renders `text` into a DocumentFragment. options.citation(n) returns a
  // node to show for citation number n, or null to keep the "[n]" text.
  Ragd.renderMarkdown = function (text, options) {
    var doc = root.document;
    var frag = doc.createDocumentFragment();
    buildBlocks(doc, frag, Ragd.parseMarkdown(text), options || {});
    return frag;
  };
})(typeof window !== "undefined" ? window : globalThis);
