// cryptoscope report: sortable and filterable tables, provider and family toggles.
// Hand-written, no library, no network. Everything a click does can also be asked for in
// the address, read once on load (and written back as the page changes):
//   report.html#sort=TABLE:COLUMN:asc|desc&hide=provider:NAME,family:NAME&filter=TABLE:TEXT
// TABLE is a table's id ("results-0"; "results" means the first run's), COLUMN counts
// from 0. Several sorts or filters: separate them with ";".
(function () {
  "use strict";
  var hidden = { provider: {}, family: {} };
  var sorts = {};
  var filters = {};
  var UNITS = { ns: 1, "µs": 1e3, us: 1e3, ms: 1e6, s: 1e9, "%": 1, B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824 };

  // The number a cell shows, in a common unit ("1,234", "12.5 µs", "1.80 ms", "45%",
  // "<1%"), or null ("-", "", text).
  function number(text) {
    var t = text.replace(/[,\u202f\u00a0]/g, "").trim();
    var below = t.charAt(0) === "<" ? 0.5 : 1; // "<1%": between 0% and 1%
    t = t.replace(/^[<>≈~×]\s*/, "");
    var m = /^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*(ns|µs|us|ms|s|%|B|KiB|MiB|GiB)?(?![A-Za-z0-9])/.exec(t);
    if (!m) return null;
    return below * parseFloat(m[1]) * (m[2] ? UNITS[m[2]] : 1);
  }

  function cellText(row, col) {
    var c = row.cells[col];
    return c ? c.textContent.trim() : "";
  }

  function findTable(id) {
    return document.getElementById(id) || document.getElementById(id + "-0");
  }

  // Sorts a table's body by one column: numbers as numbers when most filled cells are
  // numbers, text otherwise (digits in names compared as numbers); empty cells and "-"
  // last in either direction; ties keep their order.
  function sortTable(table, col, dir) {
    var body = table && table.tBodies[0];
    if (!body || !table.tHead) return;
    var rows = Array.prototype.slice.call(body.rows);
    var text = rows.map(function (r) { return cellText(r, col); });
    var nums = text.map(number);
    var filled = text.filter(function (t) { return t !== "" && t !== "-"; }).length;
    var numeric = filled > 0 && nums.filter(function (n) { return n !== null; }).length * 2 >= filled;
    var missing = function (i) { return numeric ? nums[i] === null : text[i] === "" || text[i] === "-"; };
    var order = rows.map(function (_, i) { return i; });
    order.sort(function (a, b) {
      var ma = missing(a), mb = missing(b);
      if (ma || mb) return ma === mb ? a - b : ma ? 1 : -1;
      var c = numeric ? nums[a] - nums[b] : text[a].localeCompare(text[b], undefined, { numeric: true, sensitivity: "base" });
      return (dir === "desc" ? -c : c) || a - b;
    });
    order.forEach(function (i) { body.appendChild(rows[i]); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) th.setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
    sorts[table.id] = col + ":" + dir;
  }

  // Hides the rows of a table that do not contain the text (case aside); charts and
  // details inside a row are not searched.
  function filterTable(table, text) {
    var body = table && table.tBodies[0];
    if (!body) return;
    var want = text.trim().toLowerCase();
    Array.prototype.forEach.call(body.rows, function (r) {
      var words = Array.prototype.map.call(r.cells, function (c) {
        return c.querySelector("details,svg") ? "" : c.textContent;
      }).join(" ").toLowerCase();
      r.classList.toggle("filtered", want !== "" && words.indexOf(want) < 0);
    });
    var box = table.previousElementSibling;
    if (box && box.classList.contains("filter") && box.value !== text) box.value = text;
    if (want === "") delete filters[table.id];
    else filters[table.id] = text;
  }

  // Every mark and row of a hidden provider or family gets the class "hidden".
  function applyToggles() {
    document.querySelectorAll("[data-provider],[data-family]").forEach(function (el) {
      var off = hidden.provider[el.getAttribute("data-provider")] || hidden.family[el.getAttribute("data-family")];
      el.classList.toggle("hidden", !!off);
    });
    document.querySelectorAll("input[data-toggle]").forEach(function (box) {
      box.checked = !hidden[box.getAttribute("data-toggle")][box.value];
    });
  }

  function setHidden(kind, name, off) {
    if (!hidden[kind]) return;
    if (off) hidden[kind][name] = true;
    else delete hidden[kind][name];
  }

  // The state as an address fragment, and back.
  function writeState() {
    var parts = [];
    var s = Object.keys(sorts).map(function (id) { return id + ":" + sorts[id]; });
    if (s.length) parts.push("sort=" + s.join(";"));
    var h = [];
    Object.keys(hidden).forEach(function (k) {
      Object.keys(hidden[k]).forEach(function (n) { h.push(k + ":" + n); });
    });
    if (h.length) parts.push("hide=" + h.map(encodeURIComponent).join(","));
    var f = Object.keys(filters).map(function (id) { return id + ":" + encodeURIComponent(filters[id]); });
    if (f.length) parts.push("filter=" + f.join(";"));
    if (window.history && history.replaceState) history.replaceState(null, "", "#" + parts.join("&"));
  }

  function readState() {
    var q = [location.search.slice(1), location.hash.slice(1)].join("&");
    q.split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      if (eq < 0) return;
      var key = part.slice(0, eq);
      var items = part.slice(eq + 1).split(key === "hide" ? "," : ";");
      items.forEach(function (raw) {
        var v = decodeURIComponent(raw.replace(/\+/g, " "));
        var c = v.indexOf(":");
        if (c < 0) return;
        if (key === "hide") {
          setHidden(v.slice(0, c), v.slice(c + 1), true);
        } else if (key === "sort") {
          var m = /^(.*):(\d+)(?::(asc|desc))?$/.exec(v);
          if (m) sortTable(findTable(m[1]), +m[2], m[3] || "asc");
        } else if (key === "filter") {
          filterTable(findTable(v.slice(0, c)), v.slice(c + 1));
        }
      });
    });
    applyToggles();
  }

  function init() {
    var n = 0;
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (!table.id) table.id = "table-" + n++;
      if (!table.tHead) return;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
        th.tabIndex = 0;
        var go = function () {
          sortTable(table, col, th.getAttribute("aria-sort") === "ascending" ? "desc" : "asc");
          writeState();
        };
        th.addEventListener("click", go);
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            go();
          }
        });
      });
      var box = table.previousElementSibling;
      if (box && box.classList.contains("filter")) {
        box.addEventListener("input", function () {
          filterTable(table, box.value);
          writeState();
        });
      }
    });
    document.querySelectorAll("input[data-toggle]").forEach(function (box) {
      box.addEventListener("change", function () {
        setHidden(box.getAttribute("data-toggle"), box.value, !box.checked);
        applyToggles();
        writeState();
      });
    });
    readState();
  }

  window.cryptoscope = { sortTable: sortTable, filterTable: filterTable, setHidden: setHidden, applyToggles: applyToggles, number: number };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
