"""report.html's inline style sheet and script: the page needs no network."""

from __future__ import annotations

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;
--PASS:#1a7f37;--PASS-bg:#dafbe1;--NON_STRICT:#7d4e00;--NON_STRICT-bg:#fff1c2;
--FAIL:#b3261e;--FAIL-bg:#ffd8d3;--ERROR:#8a1c7c;--ERROR-bg:#f6d5f0;
--TIMEOUT:#9a4700;--TIMEOUT-bg:#ffdfbf;--SKIP:#59636e;--SKIP-bg:#eaeef2;
--XFAIL:#0b5cad;--XFAIL-bg:#dbeafe;--XPASS:#5b2bb5;--XPASS-bg:#e8dcff}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header{padding:16px 24px 4px}h1{margin:0 0 4px;font-size:22px}
.meta{margin:0;color:var(--muted)}
main{padding:0 24px 40px}h2{font-size:17px;margin:22px 0 8px}h2 small{color:var(--muted)}
code,pre,.ws,.esc{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
thead th{background:var(--soft)}
.summary .num{text-align:right;font-variant-numeric:tabular-nums;min-width:3.5em}
.summary tr.not-ok th code{color:var(--FAIL)}
.summary .spec{color:var(--muted);font-size:12px;font-family:ui-monospace,monospace}
.summary tr.failure td{background:var(--FAIL-bg)}
.badge{display:inline-block;padding:0 6px;border-radius:10px;font-size:11.5px;font-weight:600;
letter-spacing:.02em;white-space:nowrap}
.v-PASS{--c:var(--PASS);--b:var(--PASS-bg)}.v-NON_STRICT{--c:var(--NON_STRICT);--b:var(--NON_STRICT-bg)}
.v-FAIL{--c:var(--FAIL);--b:var(--FAIL-bg)}.v-ERROR{--c:var(--ERROR);--b:var(--ERROR-bg)}
.v-TIMEOUT{--c:var(--TIMEOUT);--b:var(--TIMEOUT-bg)}.v-SKIP{--c:var(--SKIP);--b:var(--SKIP-bg)}
.v-XFAIL{--c:var(--XFAIL);--b:var(--XFAIL-bg)}.v-XPASS{--c:var(--XPASS);--b:var(--XPASS-bg)}
.v-none{--c:var(--muted);--b:#fff}
.badge{color:var(--c);background:var(--b);border:1px solid var(--c)}
.controls{display:flex;flex-wrap:wrap;gap:6px 20px;align-items:center;margin:6px 0}
#shown{color:var(--muted)}
.legend{list-style:none;padding:0;margin:8px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
.legend .meaning{color:var(--muted);font-size:12.5px}
.hint{color:var(--muted);font-size:12.5px;margin:4px 0 10px}
.matrix-wrap{position:relative}
.matrix{min-width:50%}
.matrix thead th{position:sticky;top:0;z-index:2}
.matrix th[scope=row]{font-weight:normal;min-width:22em;max-width:40em}
.matrix .slug{font-weight:600}.matrix .title{color:var(--muted);font-size:12.5px}
.matrix .level{font-size:11px;color:var(--muted);border:1px solid var(--line);border-radius:3px;
padding:0 3px}
.category-head th{background:#eef1f4;font-size:14px;padding-top:8px}
.category-head small{color:var(--muted);font-weight:normal}
td.cell{background:var(--b);min-width:8em;padding:0}
td.cell>details>summary{cursor:pointer;padding:5px 8px;color:var(--c);font-weight:600;
list-style:none;display:flex;gap:8px;align-items:center;justify-content:space-between}
td.cell>details>summary::-webkit-details-marker{display:none}
td.cell>details[open]>summary{outline:2px solid var(--c);outline-offset:-2px}
td.v-none{text-align:center;color:var(--muted)}
.dots{display:inline-flex;gap:2px}
.dots i{width:9px;height:9px;border-radius:2px;background:var(--c);display:inline-block}
.dots i.v-PASS{opacity:.45}
.panel{position:absolute;left:0;right:0;z-index:5;background:#fff;border:1px solid var(--line);
border-radius:6px;box-shadow:0 8px 24px rgba(0,0,0,.18);padding:10px 14px;max-height:75vh;
overflow:auto;color:var(--fg);font-weight:normal}
.panel-head{font-weight:600;margin-bottom:6px}
.check{border-left:4px solid var(--c);padding:2px 10px;margin:8px 0}
.check h4{margin:2px 0;font-size:13.5px}.passed{margin:6px 0}.reason{margin:2px 0 6px}
.label{color:var(--muted);font-size:12px;margin-top:4px}
pre{margin:0;white-space:pre-wrap;word-break:break-all}
.ws{color:#8c959f}
.cr{font-size:0}.cr::before{content:"CR";font-size:8px;line-height:1;vertical-align:1px;
border:1px solid currentColor;border-radius:2px;padding:0 1px;margin:0 1px}
.esc{color:#bf3989;background:#ffeff7}
.gap{color:var(--muted)}.null{color:var(--muted);font-style:italic}
.chunks{margin:2px 0 6px;line-height:1.9;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,
monospace;font-size:12.5px;white-space:pre-wrap;word-break:break-all}
.chunks>i{font-style:normal;border:1px solid #afb8c1;border-radius:3px;padding:1px 2px;
margin-right:2px;background:#fff}
.chunks .r{background:#dbeafe;color:#0b3d91;font-style:italic}
.chunks>.gap{margin:0 6px}
.channels{margin:4px 0 6px}.channels th{width:7em}.channels td:nth-child(2){color:var(--muted)}
.channels tr.differs th{color:var(--FAIL)}
del{background:#ffc1bd;text-decoration:line-through}ins{background:#a8f0b8;text-decoration:none}
[hidden]{display:none!important}
#fuzzing .legend{margin-top:0}
.fuzz-counts span{white-space:nowrap}
.fuzz-grid td.fz{background:var(--b);min-width:12em}
.fuzz-grid th[scope=row]{font-weight:normal}
.fuzz-grid td.v-none{text-align:center;color:var(--muted)}
.fuzz-grid .n{color:var(--muted);font-size:12px;white-space:nowrap}
.fuzz-grid a{color:var(--c)}
pre.cmd{background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:4px 8px;
margin:2px 0 10px;word-break:normal;overflow-wrap:anywhere}
.fuzz-case{border:1px solid var(--line);border-left:4px solid var(--c);border-radius:4px;
padding:6px 14px;margin:12px 0;max-width:80em}
.fuzz-case h3{margin:2px 0 4px;font-size:14px}.fuzz-case h3 small{color:var(--muted);
font-weight:normal}
.fuzz-case:target{box-shadow:0 0 0 3px var(--b)}
.case-file{margin:6px 0 2px}
#fix .fix{max-width:80em}.fix>summary{cursor:pointer}
.fix>summary h4{display:inline}.fix h4 small{color:var(--muted);font-weight:normal}
.fix-impl small{color:var(--muted);font-weight:normal}.fix-cases{margin:2px 0 6px}
.category-head td.count{background:#eef1f4;font-size:12.5px;color:var(--muted);white-space:nowrap}
.category-head td.count.some{color:var(--FAIL)}
"""

SCRIPT = """
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
"""
