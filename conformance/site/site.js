// The filters of the site's tables, kept in the URL's query (?library=..&level=..&disagree=1)
// so that a filtered view can be linked. No dependencies; without script every row shows.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  if (!form) {
    return;
  }
  var NAMES = ["library", "language", "profile", "category", "level", "disagree"];

  function fromUrl() {
    var query = new URLSearchParams(window.location.search);
    NAMES.forEach(function (name) {
      var field = form.elements[name];
      if (!field) {
        return;
      }
      if (field.type === "checkbox") {
        field.checked = query.get(name) === "1";
      } else if (query.has(name)) {
        field.value = query.get(name);
      }
    });
  }

  function wanted() {
    var state = {};
    NAMES.forEach(function (name) {
      var field = form.elements[name];
      if (!field) {
        return;
      }
      var value = field.type === "checkbox" ? (field.checked ? "1" : "") : field.value;
      if (value) {
        state[name] = value;
      }
    });
    return state;
  }

  function toUrl(state) {
    var query = new URLSearchParams(state).toString();
    var url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
    window.history.replaceState(null, "", url);
  }

  function matches(element, state, names) {
    return names.every(function (name) {
      return !state[name] || element.getAttribute("data-" + name) === state[name];
    });
  }

  function apply() {
    var state = wanted();
    toUrl(state);
    var hiddenColumns = {};
    document.querySelectorAll("th[data-col]").forEach(function (header) {
      var show = matches(header, state, ["library", "language", "profile"]);
      if (!show) {
        hiddenColumns[header.getAttribute("data-col")] = true;
      }
    });
    document.querySelectorAll("[data-col]").forEach(function (cell) {
      cell.hidden = Boolean(hiddenColumns[cell.getAttribute("data-col")]);
    });
    var implementations = document.querySelectorAll("tr[data-impl]");
    implementations.forEach(function (row) {
      row.hidden = !matches(row, state, ["library", "language", "profile"]);
    });
    var rows = document.querySelectorAll("tr[data-row]");
    var shown = 0;
    rows.forEach(function (row) {
      var show = matches(row, state, ["category", "level"]);
      if (show && state.disagree) {
        var values = {};
        row.querySelectorAll("td[data-col]").forEach(function (cell) {
          var value = cell.getAttribute("data-share");
          if (!cell.hidden && value) {
            values[value] = true;
          }
        });
        show = Object.keys(values).length > 1;
      }
      row.hidden = !show;
      shown += show ? 1 : 0;
    });
    var note = document.getElementById("shown");
    if (note) {
      note.textContent = rows.length
        ? shown + " of " + rows.length + " rows shown"
        : "";
    }
  }

  fromUrl();
  apply();
  form.addEventListener("change", apply);
  form.addEventListener("reset", function () {
    window.setTimeout(apply, 0);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
  });
})();
