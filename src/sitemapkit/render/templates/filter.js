// Filter the findings by rule and severity; the page reads the same without this script.
// The URL's fragment presets the filter: report.html#rule=SM301&severity=error.
(function () {
  "use strict";
  var form = document.getElementById("filter");
  var rule = document.getElementById("filter-rule");
  var severity = document.getElementById("filter-severity");
  var count = document.getElementById("filter-count");
  var rows = document.querySelectorAll("table.findings tbody tr");
  if (!form || !rule || !severity || !count) return;
  function apply() {
    var shown = 0;
    rows.forEach(function (tr) {
      var keep = (!rule.value || tr.dataset.rule === rule.value) &&
        (!severity.value || tr.dataset.severity === severity.value);
      tr.hidden = !keep;
      if (keep) shown += 1;
    });
    count.textContent = shown + " of " + rows.length + " shown";
    document.documentElement.dataset.shown = String(shown);
  }
  var wanted = new URLSearchParams(location.hash.slice(1));
  if (wanted.has("rule")) rule.value = wanted.get("rule");
  if (wanted.has("severity")) severity.value = wanted.get("severity");
  rule.addEventListener("change", apply);
  severity.addEventListener("change", apply);
  form.hidden = false;
  apply();
  document.documentElement.dataset.filter = "ready";
})();
