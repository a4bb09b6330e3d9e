// Progressive enhancement only: every page is complete and readable without this file.
// Text that comes from data (transcripts, search shards) is only ever set with textContent.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var root = document.body.getAttribute("data-root") || "";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- Search data: script files (a <script src> loads from file://, fetch does not) ----

  // The data scripts call agenthropicSearch.sessions([...]) and agenthropicSearch.shard(id, rows), or for
  // a large session agenthropicSearch.parts(id, [file, ...]), each file a shard of some of its rows;
  // the loaders below pick what arrived when the script's load event fires.
  var arrived = { sessions: null, shards: {}, parts: {} };
  var SAFE_ANCHOR = /^m\d+(-b\d+)?$/;

  // A path from the site root that can only stay inside the site: no scheme, no leading slash, no . or .. segment.
  function safePath(path) {
    return typeof path === "string" && /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(path) && !/(^|\/)\.\.?(\/|$)/.test(path);
  }

  function loadScript(src, done) {
    var script = document.createElement("script");
    script.src = src;
    script.onload = function () { script.remove(); done(true); };
    script.onerror = function () { script.remove(); done(false); };
    document.head.appendChild(script);
  }

  // Lower-cased once per shard: every query after the first reuses it.
  function loadShard(src, sid, done) {
    loadScript(src, function (ok) {
      var rows = arrived.shards[sid], files = arrived.parts[sid];
      delete arrived.shards[sid];
      delete arrived.parts[sid];
      if (ok && Array.isArray(files) && files.every(safePath)) { loadFiles(files, sid, [], done); return; }
      if (!ok || !Array.isArray(rows)) { done(null); return; }
      done(entriesOf(rows));
    });
  }

  // The files of a large session's shard, one after the other (each hands its rows to shard(id, rows)), paths from the site root.
  function loadFiles(files, sid, entries, done) {
    if (!files.length) { done(entries); return; }
    loadScript(root + files[0], function (ok) {
      var rows = arrived.shards[sid];
      delete arrived.shards[sid];
      if (!ok || !Array.isArray(rows)) { done(null); return; }
      loadFiles(files.slice(1), sid, entries.concat(entriesOf(rows)), done);
    });
  }

  function entriesOf(rows) {
    var entries = [];
    rows.forEach(function (row) {
      if (!Array.isArray(row) || row.length !== 4 || !safePath(row[0]) || !/\.html$/.test(row[0]) || !SAFE_ANCHOR.test(row[1])) return;
      var text = String(row[3]);
      entries.push({ href: row[0], anchor: row[1], kind: String(row[2]), text: text, lower: text.toLowerCase() });
    });
    return entries;
  }

  function loadSessions(src, done) {
    loadScript(src, function (ok) {
      var list = arrived.sessions;
      arrived.sessions = null;
      done(ok && Array.isArray(list) ? list.filter(function (s) { return s && safePath(s.shard); }) : null);
    });
  }

  function words(query) {
    return query.toLowerCase().split(/\s+/).filter(function (w) { return w !== ""; });
  }

  function matchesAll(entry, terms) {
    for (var i = 0; i < terms.length; i++) if (entry.lower.indexOf(terms[i]) === -1) return false;
    return terms.length > 0;
  }

  // A piece of `text` around the first term, whitespace folded, every term marked with <mark>.
  function snippet(text, terms) {
    var lower = text.toLowerCase();
    var at = lower.indexOf(terms[0]);
    var start = Math.max(0, at - 60), end = Math.min(text.length, Math.max(at, 0) + terms[0].length + 140);
    var piece = text.slice(start, end), pieceLower = lower.slice(start, end);
    var out = el("span", "snippet");
    if (start > 0) out.appendChild(document.createTextNode("…"));
    var pos = 0;
    while (pos < piece.length) {
      var best = -1, length = 0;
      terms.forEach(function (term) {
        var found = pieceLower.indexOf(term, pos);
        if (found !== -1 && (best === -1 || found < best || (found === best && term.length > length))) { best = found; length = term.length; }
      });
      if (best === -1) { out.appendChild(document.createTextNode(fold(piece.slice(pos)))); break; }
      if (best > pos) out.appendChild(document.createTextNode(fold(piece.slice(pos, best))));
      out.appendChild(el("mark", "", piece.slice(best, best + length)));
      pos = best + length;
    }
    if (end < text.length) out.appendChild(document.createTextNode("…"));
    return out;
  }

  function fold(text) { return text.replace(/\s+/g, " "); }

  // Where a shard's page is, in words: "page 4", "agent a1b2, page 2", "agent a1b2".
  function placeOf(href) {
    var parts = href.split("/");
    var name = parts[parts.length - 1].replace(/\.html$/, "");
    if (parts[2] === "transcript") return "page " + name;
    if (parts[2] === "agents") return parts.length > 4 ? "agent " + parts[3] + ", page " + name : "agent " + name;
    return name === "index" ? "session page" : href;
  }

  window.agenthropicSearch = {
    sessions: function (list) { arrived.sessions = list; },
    shard: function (sid, rows) { arrived.shards[String(sid)] = rows; },
    parts: function (sid, files) { arrived.parts[String(sid)] = files; },
    // For search.js, which the search page loads after this file.
    root: root, el: el, loadShard: loadShard, loadSessions: loadSessions, words: words, matchesAll: matchesAll, snippet: snippet, placeOf: placeOf,
  };

  // ---- Sortable tables ----

  // A cell's key is its data-sort, else its text. A key that is a number as a whole (thousands
  // separators allowed) sorts as one: parseFloat alone read "2026-07-26 12:48" as 2026 and
  // "5h 48m" as 5. Numbers come before words, and an unknown value ("" or a dash) comes last
  // in either direction.
  var NUMBER = /^[-+]?(\d{1,3}(,\d{3})+(\.\d+)?|\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
  var collator = window.Intl && Intl.Collator ? new Intl.Collator(undefined, { numeric: true }) : null;

  function sortKey(row, index) {
    var cell = row.cells[index];
    var text = !cell ? "" : (cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent).trim();
    var number = NUMBER.test(text) ? parseFloat(text.replace(/,/g, "")) : null;
    return { unknown: text === "" || text === "\u2014", number: number, text: text };
  }

  function compareKeys(x, y) {
    if (x.number !== null || y.number !== null) {
      if (x.number === null) return 1;
      if (y.number === null) return -1;
      return x.number - y.number;
    }
    if (collator) return collator.compare(x.text, y.text);
    return x.text < y.text ? -1 : x.text > y.text ? 1 : 0;
  }

  function sortBy(table, index, ascending) {
    var body = table.tBodies[0];
    if (!body) return;
    // Each row's key is read once, not at every comparison, and the rows go back into an emptied
    // body in one move: moving each row within the body took Chromium 2 s for 5,000 rows, and
    // this 0.06 s. Rows with equal keys keep their order.
    var keyed = Array.prototype.map.call(body.rows, function (row, place) {
      return { row: row, key: sortKey(row, index), place: place };
    });
    keyed.sort(function (a, b) {
      if (a.key.unknown !== b.key.unknown) return a.key.unknown ? 1 : -1;
      var result = compareKeys(a.key, b.key);
      return (ascending ? result : -result) || a.place - b.place;
    });
    body.textContent = "";
    var rows = document.createDocumentFragment();
    keyed.forEach(function (item) { rows.appendChild(item.row); });
    body.appendChild(rows);
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (head, index) {
      head.setAttribute("tabindex", "0");
      head.addEventListener("click", function () {
        var ascending = head.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        head.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        sortBy(table, index, ascending);
      });
      // Focusable by Tab, so Enter and Space sort too, as they press a button.
      head.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          head.click();
        }
      });
    });
  });

  // ---- The index's quick filter ----

  var search = document.getElementById("search");
  var table = document.getElementById("sessions");
  var indexBlock = document.getElementById("search-index");
  if (search && table) {
    // Session id -> lower-cased title and first prompts, from the page's inert JSON block.
    var texts = {};
    try {
      var entries = indexBlock ? JSON.parse(indexBlock.textContent) : [];
      entries.forEach(function (entry) { texts[entry.id] = (entry.title + " " + entry.prompts.join(" ")).toLowerCase(); });
    } catch (error) {
      texts = {};
    }
    search.addEventListener("input", function () {
      var needle = search.value.toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var haystack = row.textContent.toLowerCase() + " " + (texts[row.getAttribute("data-session")] || "");
        row.hidden = needle !== "" && haystack.indexOf(needle) === -1;
      });
    });
  }

  // ---- Transcript pages ----

  function openAround(node, stop) {
    for (var at = node; at && at !== stop; at = at.parentNode) if (at.tagName === "DETAILS") at.open = true;
  }

  // A link to #m12 or #m12-b3 opens the <details> it points into; an id this page lacks falls back to its message.
  function showTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!SAFE_ANCHOR.test(id)) return;
    var target = document.getElementById(id) || document.getElementById(id.replace(/-b\d+$/, ""));
    if (!target) return;
    openAround(target, document.body);
    target.scrollIntoView({ block: "start" });
  }

  var transcript = document.querySelector("ol.transcript");
  var tools = document.getElementById("transcript-tools");
  if (transcript && tools) buildTools(transcript, tools);

  function visible(node) { return node.getClientRects().length > 0; }

  function buildTools(list, bar) {
    var messages = Array.prototype.slice.call(list.querySelectorAll(":scope > li.msg"));

    function button(label, title, action) {
      var b = el("button", "", label);
      b.type = "button";
      if (title) b.title = title;
      b.addEventListener("click", action);
      bar.appendChild(b);
      return b;
    }

    function setAll(open) { list.querySelectorAll("details").forEach(function (d) { d.open = open; }); }
    button("Expand all", "Open every tool call, result and thinking block on this page", function () { setAll(true); });
    button("Collapse all", "", function () { setAll(false); });

    // Relative to the viewport, below the bar when it sticks to the top: the first prompt below, or the last one above.
    function jumpPrompt(step) {
      var edge = getComputedStyle(bar).position === "sticky" ? bar.offsetHeight : 0;
      var prompts = messages.filter(function (m) { return m.classList.contains("prompt") && visible(m); });
      var pick = null;
      prompts.forEach(function (m) {
        var top = m.getBoundingClientRect().top - edge;
        if (step > 0 && top > 4 && pick === null) pick = m;
        if (step < 0 && top < -4) pick = m;
      });
      if (pick) window.scrollBy(0, pick.getBoundingClientRect().top - edge);
    }
    button("Previous prompt", "Previous prompt ( [ )", function () { jumpPrompt(-1); });
    button("Next prompt", "Next prompt ( ] )", function () { jumpPrompt(1); });
    document.addEventListener("keydown", function (event) {
      var t = event.target;
      if (event.ctrlKey || event.metaKey || event.altKey || (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))) return;
      if (event.key === "[") jumpPrompt(-1);
      else if (event.key === "]") jumpPrompt(1);
    });

    // The filter only sets a class on the list: CSS hides the messages lacking the data-has token.
    var filterLabel = el("label", "filter");
    filterLabel.appendChild(document.createTextNode("Show "));
    var filter = el("select");
    filter.id = "transcript-filter";
    [["", "All"], ["prompt", "Prompts only"], ["tool", "Tools"], ["error", "Errors"], ["thinking", "Thinking"]].forEach(function (pair) {
      var option = el("option", "", pair[1]);
      option.value = pair[0];
      filter.appendChild(option);
    });
    filter.addEventListener("change", function () {
      ["prompt", "tool", "error", "thinking"].forEach(function (token) { list.classList.toggle("only-" + token, filter.value === token); });
    });
    filterLabel.appendChild(filter);
    bar.appendChild(filterLabel);

    buildFind(list, bar, messages);
  }

  function buildFind(list, bar, messages) {
    var box = el("span", "find");
    var input = el("input");
    input.type = "search";
    input.id = "transcript-find";
    input.placeholder = "Find in this session";
    input.setAttribute("aria-label", "Find in this session (Enter for the next match)");
    var status = el("span", "find-status");
    status.setAttribute("role", "status");
    box.appendChild(input);
    box.appendChild(status);
    bar.appendChild(box);
    // After the bar, not in it: the bar sticks to the top and this list can be long.
    var elsewhere = el("ul", "find-elsewhere");
    bar.parentNode.insertBefore(elsewhere, bar.nextSibling);

    var shardSrc = bar.getAttribute("data-search"), sid = bar.getAttribute("data-session") || "";
    var shard, shardWaiting = [];
    function withShard(done) {
      if (shard !== undefined) { done(shard); return; }
      shardWaiting.push(done);
      if (shardWaiting.length > 1) return;
      if (!shardSrc) { shard = null; shardWaiting.forEach(function (f) { f(null); }); return; }
      loadShard(shardSrc, sid, function (entries) {
        shard = entries;
        var waiting = shardWaiting;
        shardWaiting = [];
        waiting.forEach(function (f) { f(entries); });
      });
    }

    var last = { query: null, index: -1 };
    var highlights = window.CSS && CSS.highlights && window.Highlight ? CSS.highlights : null;

    function mark(message, needle) {
      messages.forEach(function (m) { m.classList.remove("find-current"); });
      message.classList.add("find-current");
      var walker = document.createTreeWalker(message, NodeFilter.SHOW_TEXT), node, nodes = [], text = "";
      while ((node = walker.nextNode())) { nodes.push([node, text.length]); text += node.data; }
      var at = text.toLowerCase().indexOf(needle);
      var target = message;
      if (at !== -1) {
        var start = locate(nodes, at, false), end = locate(nodes, at + needle.length, true);
        openAround(start[0].parentNode, list);
        openAround(end[0].parentNode, list);
        target = start[0].parentNode;
        if (highlights) {
          var range = document.createRange();
          range.setStart(start[0], start[1]);
          range.setEnd(end[0], end[1]);
          highlights.set("find", new Highlight(range));
        }
      }
      target.scrollIntoView({ block: "center" });
    }

    // The text node and offset of character `at` of the joined text nodes: where a match starts, or (isEnd) ends.
    function locate(nodes, at, isEnd) {
      for (var i = nodes.length - 1; i > 0; i--) if (isEnd ? nodes[i][1] < at : nodes[i][1] <= at && nodes[i][0].data.length > 0) break;
      // Clamped: lower-casing can lengthen a few characters (İ), shifting offsets past a node's end.
      return [nodes[i][0], Math.min(at - nodes[i][1], nodes[i][0].data.length)];
    }

    function find() {
      var needle = input.value.trim().toLowerCase();
      if (!needle) {
        status.textContent = "";
        elsewhere.textContent = "";
        last.query = null;
        messages.forEach(function (m) { m.classList.remove("find-current"); });
        if (highlights) highlights.delete("find");
        return;
      }
      var hits = messages.filter(function (m) { return visible(m) && m.textContent.toLowerCase().indexOf(needle) !== -1; });
      if (needle !== last.query) {
        last.query = needle;
        // Start at the first match from the top of the viewport down.
        var next = hits.findIndex(function (m) { return m.getBoundingClientRect().bottom > 0; });
        last.index = next === -1 ? 0 : next;
        listElsewhere(needle);
      } else {
        last.index = hits.length ? (last.index + 1) % hits.length : -1;
      }
      if (!hits.length) { status.textContent = "0 on this page"; return; }
      status.textContent = (last.index + 1) + " of " + hits.length + " on this page";
      mark(hits[last.index], needle);
    }

    function listElsewhere(needle) {
      elsewhere.textContent = "";
      withShard(function (entries) {
        if (needle !== last.query) return;
        elsewhere.textContent = "";
        if (entries === null) { elsewhere.appendChild(el("li", "note", "Matches on the other pages of this session could not be loaded.")); return; }
        var here = location.pathname, pages = {}, order = [];
        entries.forEach(function (entry) {
          if (entry.lower.indexOf(needle) === -1) return;
          var url = root + entry.href;
          if (new URL(url, location.href).pathname === here) return;
          if (!pages[entry.href]) { pages[entry.href] = { first: entry, count: 0 }; order.push(entry.href); }
          pages[entry.href].count += 1;
        });
        order.forEach(function (href) {
          var page = pages[href], item = el("li"), link = el("a", "", placeOf(href));
          link.href = root + href + "#" + page.first.anchor;
          item.appendChild(link);
          item.appendChild(document.createTextNode(page.count > 1 ? " (" + page.count + "): " : ": "));
          item.appendChild(snippet(page.first.text, [needle]));
          elsewhere.appendChild(item);
        });
      });
    }

    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); find(); }
    });
    input.addEventListener("input", function () { if (!input.value.trim()) find(); });
  }

  // ---- Live reload keeps your place: scroll and open <details>, per page, for this tab only ----

  var placeKey = "agenthropic:place:" + location.pathname;
  // A details without an id of its own (a long text's rest, an output inside a call) is named by
  // the nearest element with an id and its position among that element's details.
  function detailsKey(d) {
    if (d.id) return d.id;
    var owner = d.parentElement ? d.parentElement.closest("[id]") : null;
    if (!owner) return "";
    return owner.id + "/" + Array.prototype.indexOf.call(owner.querySelectorAll("details"), d);
  }
  function detailsByKey(key) {
    var slash = key.lastIndexOf("/");
    if (slash < 0) return document.getElementById(key);
    var owner = document.getElementById(key.slice(0, slash));
    return owner ? owner.querySelectorAll("details")[Number(key.slice(slash + 1))] || null : null;
  }
  window.addEventListener("pagehide", function () {
    var open = [];
    document.querySelectorAll("details[open]").forEach(function (d) { var key = detailsKey(d); if (key) open.push(key); });
    try { sessionStorage.setItem(placeKey, JSON.stringify({ x: window.scrollX, y: window.scrollY, open: open })); } catch (error) { /* storage off or full */ }
  });

  var navigation = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  var place = null;
  if (navigation && navigation.type === "reload") {
    try { place = JSON.parse(sessionStorage.getItem(placeKey) || "null"); } catch (error) { place = null; }
  }
  if (place && Array.isArray(place.open)) {
    // In document order: a details opens before the ones inside it.
    place.open.forEach(function (key) {
      var d = detailsByKey(String(key));
      if (d && d.tagName === "DETAILS") d.open = true;
    });
    var restore = function () { window.scrollTo(Number(place.x) || 0, Number(place.y) || 0); };
    restore();
    // Again once the page has loaded: the browser's own restoring may run in between.
    if (document.readyState === "complete") restore(); else window.addEventListener("load", restore);
  } else if (location.hash) {
    showTarget();
  }
  window.addEventListener("hashchange", showTarget);
})();
