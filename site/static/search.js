// The search page: finds words in every transcript, reading the data scripts under search/ (works from file://).
// Needs site.js, which the page loads first. Text from the data is only ever set with textContent.
(function () {
  "use strict";
  var S = window.agenthropicSearch;
  var form = document.getElementById("full-search");
  var input = document.getElementById("q");
  var status = document.getElementById("search-status");
  var results = document.getElementById("search-results");
  if (!S || !form || !input || !status || !results) return;

  var PARALLEL = 8; // shards loading at once (16 or more gained nothing more on 5,000 sessions)
  var BUSY_MS = 12; // a task searches loaded shards for this long, then lets the page breathe
  var PER_SESSION = 20, TOTAL = 500; // results shown: the rest are counted
  var KIND_LABELS = { "prompt": "prompt", "answer": "answer", "tool-input": "tool input", "tool-output": "tool output", "thinking": "thinking" };
  // Shards kept in memory for the next query, up to this many characters in all; later ones are loaded again.
  var KEEP_CHARS = 20000000;
  var cache = {}, cached = 0;
  var sessions = null, failedIndex = false, sessionsWaiting = [];
  var run = 0; // each query's number: a newer query stops an older one

  function withSessions(done) {
    if (sessions !== null || failedIndex) { done(sessions); return; }
    sessionsWaiting.push(done);
    if (sessionsWaiting.length > 1) return;
    S.loadSessions(S.root + "search/sessions.js", function (list) {
      sessions = list;
      failedIndex = list === null;
      var waiting = sessionsWaiting;
      sessionsWaiting = [];
      waiting.forEach(function (f) { f(list); });
    });
  }

  function shardOf(session, done) {
    var sid = String(session.id);
    if (cache[sid]) { done(cache[sid]); return; }
    S.loadShard(S.root + session.shard, sid, function (entries) {
      var size = entries ? entries.reduce(function (sum, entry) { return sum + entry.text.length; }, 0) : 0;
      if (entries && cached + size <= KEEP_CHARS) { cache[sid] = entries; cached += size; }
      done(entries);
    });
  }

  function later(f) { setTimeout(f, 0); }

  function search(query) {
    var mine = ++run;
    var terms = S.words(query);
    results.textContent = "";
    if (!terms.length) { status.textContent = ""; return; }
    status.textContent = "Loading the list of sessions…";
    withSessions(function (list) {
      if (mine !== run) return;
      if (list === null) { status.textContent = "The search data (search/sessions.js) could not be loaded: build the site again."; return; }
      scan(list, terms, mine);
    });
  }

  // Shards load a few at a time but are searched in the list's order, so results keep a stable order, for
  // BUSY_MS at most a task, so the page stays responsive however many sessions there are. (One shard a
  // task was slow: a chain of timers waits at least 4 ms a link, 20 s for 5,000 sessions.)
  function scan(list, terms, mine) {
    var loaded = [], next = 0, searched = 0, total = 0, shown = 0;
    function report() {
      var text = "Searched " + searched + " of " + list.length + " sessions: " + total + (total === 1 ? " match" : " matches");
      if (shown < total) text += " (" + shown + " shown)";
      status.textContent = text + (searched < list.length ? "…" : ".");
    }
    function start() {
      while (next < list.length && next - searched < PARALLEL) {
        (function (i) {
          shardOf(list[i], function (entries) { loaded[i] = { entries: entries }; if (i === searched) later(step); });
        })(next++);
      }
    }
    function step() {
      if (mine !== run) return;
      var began = Date.now();
      while (searched < list.length && loaded[searched]) {
        var session = list[searched], entries = loaded[searched].entries;
        loaded[searched] = null;
        searched += 1;
        if (entries === null) results.appendChild(S.el("li", "note", "Could not load the search data of session " + String(session.title || session.id) + "."));
        else total += show(session, entries, terms, total, function (n) { shown += n; });
        report();
        start();
        if (searched < list.length && loaded[searched] && Date.now() - began >= BUSY_MS) { later(step); return; } // yield, then go on
      }
    }
    report();
    start();
  }

  // Add one session's matches (at most PER_SESSION, and TOTAL on the page); return how many there were.
  function show(session, entries, terms, before, counted) {
    var count = 0, added = 0;
    entries.forEach(function (entry) {
      if (!S.matchesAll(entry, terms)) return;
      count += 1;
      if (count > PER_SESSION || before + added >= TOTAL) return;
      added += 1;
      var item = S.el("li", "hit");
      var link = S.el("a", "hit-title", String(session.title || session.id));
      link.href = S.root + entry.href + "#" + entry.anchor;
      item.appendChild(link);
      item.appendChild(S.el("span", "hit-kind kind-" + (KIND_LABELS[entry.kind] ? entry.kind : "other"), KIND_LABELS[entry.kind] || entry.kind));
      item.appendChild(S.el("span", "hit-place", S.placeOf(entry.href)));
      if (session.project) item.appendChild(S.el("span", "hit-project", String(session.project)));
      var text = S.el("div", "hit-text");
      text.appendChild(S.snippet(entry.text, terms));
      item.appendChild(text);
      results.appendChild(item);
    });
    if (count > added && added > 0) results.appendChild(S.el("li", "hit more", (count - added) + " more in " + String(session.title || session.id)));
    counted(added);
    return count;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault(); // the page's policy allows no form submission: search happens here
    search(input.value);
    try { history.replaceState(null, "", "?q=" + encodeURIComponent(input.value)); } catch (error) { /* some file:// setups refuse */ }
  });
  var initial = new URLSearchParams(location.search).get("q");
  if (initial) { input.value = initial; search(initial); }
})();
