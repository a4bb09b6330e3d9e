// Progressive enhancement only: every page is complete and readable without this file.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var key = cell.getAttribute("data-sort");
    return key !== null ? key : cell.textContent.trim();
  }

  function sortBy(table, index, ascending) {
    var body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var nx = parseFloat(x), ny = parseFloat(y);
      var result = (!isNaN(nx) && !isNaN(ny) && String(nx) !== "NaN") ? nx - ny : x.localeCompare(y);
      return ascending ? result : -result;
    });
    rows.forEach(function (row) { body.appendChild(row); });
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
    });
  });

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
})();
