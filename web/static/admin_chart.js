// Admin page: bar charts drawn as inline SVG with createElementNS (no
// library, nothing outside the page's origin). Each chart has a <title> and
// an aria-label; each bar a <title> with its figures, which browsers show on
// hover and screen readers read.
//
//   Ragd.chart.columns({bars: [{label, axisLabel, parts: [{value, cls}], title}], ...})
//     vertical stacked bars (one per label; labels without value get none;
//     axisLabel, where given, is written under the bar)
//   Ragd.chart.rows({bars: [{label, value, title}], ...})
//     horizontal bars, one per labelled row
"use strict";

(function () {
  var NS = "http://www.w3.org/2000/svg";

  function svg(tag, attrs, children) {
    var node = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined) return;
      if (k === "text") node.textContent = String(v);
      else node.setAttribute(k, String(v));
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  // A round upper bound for the axis (1, 2 or 5 times a power of ten).
  function niceMax(v) {
    if (!(v > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * p >= v) return steps[i] * p;
    return 10 * p;
  }

  function short(n) {
    if (n >= 1e9) return (n / 1e9).toFixed(n % 1e9 ? 1 : 0) + "G";
    if (n >= 1e6) return (n / 1e6).toFixed(n % 1e6 ? 1 : 0) + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(n % 1e3 ? 1 : 0) + "k";
    return String(n);
  }

  function frame(o, width, height) {
    return svg("svg", {
      viewBox: "0 0 " + width + " " + height, width: "100%", role: "img", class: "chart",
      "aria-label": o.label, "data-testid": o.testid,
    }, [svg("title", { text: o.label }), o.description ? svg("desc", { text: o.description }) : null]);
  }

  // Vertical stacked columns with a value axis; o.bars in order (left to right).
  function columns(o) {
    var W = 720, H = 220, left = 44, right = 8, top = 10, bottom = 26;
    var plotW = W - left - right, plotH = H - top - bottom;
    var totals = o.bars.map(function (b) {
      return b.parts.reduce(function (s, p) { return s + (p.value || 0); }, 0);
    });
    var max = niceMax(Math.max.apply(null, [0].concat(totals)));
    var root = frame(o, W, H);
    [0, 0.5, 1].forEach(function (f) {
      var y = top + plotH * (1 - f);
      root.appendChild(svg("line", { x1: left, x2: W - right, y1: y, y2: y, class: "grid" }));
      root.appendChild(svg("text", { x: left - 6, y: y + 4, class: "axis", "text-anchor": "end",
        text: short(max * f) }));
    });
    var slot = plotW / Math.max(1, o.bars.length);
    var barW = Math.max(2, slot * 0.7);
    o.bars.forEach(function (b, i) {
      var x = left + slot * i + (slot - barW) / 2;
      if (b.axisLabel) {
        // The end labels stay inside the chart.
        var first = i === 0, last = i === o.bars.length - 1;
        root.appendChild(svg("text", { x: first ? x : last ? x + barW : x + barW / 2, y: H - 8, class: "axis",
          "text-anchor": first ? "start" : last ? "end" : "middle", text: b.axisLabel }));
      }
      if (!(totals[i] > 0)) return;
      // The whole column in the colour of the last part; the earlier parts over it from the bottom.
      var g = svg("g", { "data-testid": o.barGroupTestid, "data-label": b.label, "data-value": totals[i] },
        [svg("title", { text: b.title })]);
      var h = plotH * totals[i] / max;
      g.appendChild(svg("rect", { x: x, y: top + plotH - h, width: barW, height: h,
        class: b.parts[b.parts.length - 1].cls, "data-testid": o.barTestid, "data-label": b.label,
        "data-value": totals[i], "aria-label": b.title }));
      var base = top + plotH;
      b.parts.slice(0, -1).forEach(function (p) {
        var ph = plotH * (p.value || 0) / max;
        if (ph <= 0) return;
        base -= ph;
        g.appendChild(svg("rect", { x: x, y: base, width: barW, height: ph, class: p.cls }));
      });
      root.appendChild(g);
    });
    return root;
  }

  // Horizontal bars, one labelled row each; o.bars in order (top to bottom).
  function rows(o) {
    var W = 720, rowH = 24, labelW = 150, valueW = 70, top = 4;
    var H = top * 2 + rowH * Math.max(1, o.bars.length);
    var max = niceMax(Math.max.apply(null, [0].concat(o.bars.map(function (b) { return b.value || 0; }))));
    var plotW = W - labelW - valueW;
    var root = frame(o, W, H);
    o.bars.forEach(function (b, i) {
      var y = top + rowH * i;
      var label = b.label.length > 20 ? b.label.slice(0, 19) + "…" : b.label;
      var g = svg("g", { "data-label": b.label }, [svg("title", { text: b.title })]);
      g.appendChild(svg("text", { x: labelW - 8, y: y + rowH / 2 + 4, class: "axis", "text-anchor": "end",
        text: label }));
      var w = plotW * (b.value || 0) / max;
      if (b.value > 0) {
        g.appendChild(svg("rect", { x: labelW, y: y + 4, width: Math.max(1, w), height: rowH - 8, class: b.cls || "bar",
          "data-testid": o.barTestid, "data-label": b.label, "data-value": b.value, "aria-label": b.title }));
      }
      g.appendChild(svg("text", { x: labelW + w + 6, y: y + rowH / 2 + 4, class: "axis", text: short(b.value || 0) }));
      root.appendChild(g);
    });
    return root;
  }

  Ragd.chart = { columns: columns, rows: rows, niceMax: niceMax };
})();
