(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.case"));
  var prune = document.getElementById("prune");
  var problems = document.getElementById("problems");
  var shown = document.getElementById("shown");
  function update() {
    var visible = 0;
    rows.forEach(function (row) {
      var hide = (prune && prune.checked && row.classList.contains("same")) ||
                 (problems.checked && row.classList.contains("clean"));
      row.hidden = hide;
      if (!hide) visible++;
    });
    document.querySelectorAll("tbody.category").forEach(function (group) {
      group.hidden = !group.querySelector("tr.case:not([hidden])");
    });
    shown.textContent = visible + " of " + rows.length + " cases shown";
  }
  // A fuzzing session's page has no case matrix, so no view toggles.
  if (problems) {
    // A link can ask for a view: report.html#pruned, #problems or #pruned,problems.
    var asked = location.hash.slice(1).split(",");
    if (prune && asked.indexOf("pruned") >= 0) prune.checked = true;
    if (asked.indexOf("problems") >= 0) problems.checked = true;
    if (asked.indexOf("all") >= 0) problems.checked = false;
    if (prune) prune.addEventListener("change", update);
    problems.addEventListener("change", update);
    update();
  }
  // One panel at a time: an open panel covers the rows below it.
  document.addEventListener("toggle", function (event) {
    var opened = event.target;
    if (!opened.open || !opened.closest("td.cell")) return;
    document.querySelectorAll("td.cell details[open]").forEach(function (other) {
      if (other !== opened) other.open = false;
    });
  }, true);
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    document.querySelectorAll("td.cell details[open]").forEach(function (d) { d.open = false; });
  });
})();
