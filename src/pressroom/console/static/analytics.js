// The analytics screen's charts (Chart.js, vendored): the time series with the comparison
// period overlaid, and a bar chart per breakdown. The numbers come from the report the page
// was rendered with (a JSON data block); the tables beside the charts hold the same numbers.
(function () {
  "use strict";
  var block = document.getElementById("analytics-data");
  if (!block || typeof Chart === "undefined") { return; }
  var data = JSON.parse(block.textContent);
  var metric = document.getElementById("metric").value;
  var now = "#0a58ca";
  var before = "#8c959f";
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = "system-ui, sans-serif";

  var series = [{
    label: "This period", data: data.current[metric], borderColor: now, backgroundColor: now,
    tension: 0.2, pointRadius: 2
  }];
  if (data.previousLabels.length) {
    series.push({
      label: "The period before", data: data.previous[metric], borderColor: before,
      backgroundColor: before, borderDash: [6, 4], tension: 0.2, pointRadius: 0
    });
  }
  new Chart(document.getElementById("timeseries"), {
    type: "line",
    data: { labels: data.labels, datasets: series },
    options: {
      interaction: { mode: "index", intersect: false },
      plugins: {
        tooltip: {
          callbacks: {
            title: function (items) {
              return items.map(function (item) {
                return item.datasetIndex === 0 ? data.labels[item.dataIndex] : data.previousLabels[item.dataIndex];
              }).join(" / ");
            }
          }
        }
      },
      scales: { y: { beginAtZero: true } }
    }
  });

  document.querySelectorAll("canvas[data-breakdown]").forEach(function (canvas) {
    var rows = data.breakdowns[canvas.dataset.breakdown];
    var bars = [{ label: "This period", data: rows.current[metric], backgroundColor: now }];
    if (data.previousLabels.length) {
      bars.push({ label: "The period before", data: rows.previous[metric], backgroundColor: before });
    }
    new Chart(canvas, {
      type: "bar",
      data: { labels: rows.labels, datasets: bars },
      options: { indexAxis: "y", scales: { x: { beginAtZero: true } } }
    });
  });
})();
