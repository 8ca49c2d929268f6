// benchcard site --serve: the side-by-side page's filters (fixture, variant, score). Without this script the
// page shows every output; it only hides and shows what the server rendered.
(function () {
  "use strict";
  var table = document.getElementById("matrix");
  var fixture = document.getElementById("filter-fixture");
  var score = document.getElementById("filter-score");
  var shown = document.getElementById("shown");
  var toggles = Array.prototype.slice.call(document.querySelectorAll("input[data-variant-toggle]"));
  if (!table || !fixture || !score || !shown) { return; }
  var total = table.querySelectorAll(".output").length;

  function apply() {
    var hidden = {};
    toggles.forEach(function (t) { if (!t.checked) { hidden[t.value] = true; } });
    document.querySelectorAll("[data-variant-col]").forEach(function (el) {
      el.hidden = hidden[el.getAttribute("data-variant-col")] === true;
    });
    var count = 0;
    table.querySelectorAll("tbody tr").forEach(function (row) {
      var visible = 0;
      row.querySelectorAll("td[data-variant-col]").forEach(function (td) {
        var columnShown = !td.hidden;
        td.querySelectorAll(".output").forEach(function (o) {
          var ok = columnShown && (score.value === "all" || o.getAttribute("data-score-class") === score.value);
          o.hidden = !ok;
          if (ok) { visible += 1; }
        });
      });
      var show = (fixture.value === "" || row.getAttribute("data-fixture") === fixture.value) && visible > 0;
      row.hidden = !show;
      if (show) { count += visible; }
    });
    shown.textContent = "showing " + count + " of " + total + " output" + (total === 1 ? "" : "s");
  }

  [fixture, score].concat(toggles).forEach(function (el) { el.addEventListener("change", apply); });
  apply();
}());
