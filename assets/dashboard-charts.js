// Draws each <figure class="chart"> from the table it holds, so the chart and the table show
// the same numbers. Threshold columns (th[data-threshold]) are drawn dashed. When every chart
// is drawn, the page gets the performance mark "charts-drawn" (the benchmark waits for it)
// and each figure data-drawn-points, data-x-range, data-y-range and data-y-labels attributes
// (what the tests read of a drawing they cannot see).
(() => {
  const uPlot = globalThis.uPlot;
  const figures = [...document.querySelectorAll("figure.chart")];
  if (uPlot === undefined || figures.length === 0) return;
  const COLORS = ["#0a5bb5", "#b35900", "#0a5bb5", "#b35900"];
  const HEIGHT = 220;
  const stepped = uPlot.paths.stepped({ align: 1 });

  // Millions fit the axis's width as "3.2M" (64 px cut "3,200,000" to "200,000").
  const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 2 });
  const DAY = 86_400;

  // A figure is grouped by thousands (6,100); a day without one is a dash.
  const cellValue = (cell) => {
    const text = cell.textContent.replaceAll(",", "").trim();
    const value = Number(text);
    return text === "" || Number.isNaN(value) ? null : value;
  };

  function dataOf(table) {
    const heads = [...table.tHead.rows[0].cells].slice(1);
    const rows = table.tBodies[0].rows;
    const xs = new Array(rows.length);
    const ys = heads.map(() => new Array(rows.length));
    for (let i = 0; i < rows.length; i++) {
      const cells = rows[i].cells;
      xs[i] = Date.parse(`${cells[0].textContent}T00:00:00Z`) / 1000;
      for (let k = 0; k < heads.length; k++) ys[k][i] = cellValue(cells[k + 1]);
    }
    return { heads, data: [xs, ...ys] };
  }

  let pending = figures.length;
  const plots = [];
  for (const figure of figures) {
    const table = figure.querySelector("table");
    const canvas = figure.querySelector(".chart-canvas");
    const { heads, data } = dataOf(table);
    const series = heads.map((th, k) => {
      const threshold = th.dataset.threshold !== undefined;
      return {
        label: th.textContent.replace(/ \(.*\)$/, ""),
        stroke: COLORS[k % COLORS.length],
        width: threshold ? 1.5 : 2,
        // A threshold holds from the day its period starts: drawn as steps, dashed.
        dash: threshold ? [6, 4] : undefined,
        paths: threshold ? stepped : undefined,
        // One day: a step through one point has no length, so its threshold is a point too.
        points: { show: data[0].length === 1 || (!threshold && data[0].length <= 120) },
      };
    });
    let drawn = false;
    const plot = new uPlot(
      {
        width: Math.max(240, canvas.clientWidth),
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        series: [{ label: "Date" }, ...series],
        // One day alone is drawn half a day either side of it (uPlot ranged it over years).
        scales: {
          x: {
            range: (u, min, max) => {
              const xs = u.data[0];
              return xs.length === 1 ? [xs[0] - DAY / 2, xs[0] + DAY / 2] : [min, max];
            },
          },
        },
        axes: [
          {},
          {
            size: 64,
            values: (_u, splits) => {
              const labels = splits.map((v) => compact.format(v));
              figure.dataset.yLabels = labels.join(" ");
              return labels;
            },
          },
        ],
        legend: { live: false },
        hooks: {
          init: [keyboardLegend],
          setSeries: [
            (u, i) => {
              const th = legendLabels(u)[i - 1];
              if (th !== undefined) th.setAttribute("aria-pressed", String(u.series[i].show));
            },
          ],
          draw: [
            (u) => {
              figure.dataset.drawnPoints = String(u.data[0].length);
              figure.dataset.xRange = `${u.scales.x.min},${u.scales.x.max}`;
              figure.dataset.yRange = `${u.scales.y.min},${u.scales.y.max}`;
              if (drawn) return;
              drawn = true;
              pending -= 1;
              if (pending === 0) {
                performance.mark("charts-drawn");
                document.documentElement.dataset.chartsDrawn = "true";
              }
            },
          ],
        },
      },
      data,
      canvas,
    );
    plots.push({ plot, canvas });
  }

  function legendLabels(u) {
    return [...u.root.querySelectorAll(".u-legend .u-series > th")];
  }

  // A legend entry shows or hides its line on a click; a keyboard reaches and presses it too.
  // The drawing is hidden from screen readers (its table holds the figures); the legend, now
  // a row of buttons, is not.
  function keyboardLegend(u) {
    u.root.parentElement?.removeAttribute("aria-hidden");
    u.root.querySelector(".u-wrap")?.setAttribute("aria-hidden", "true");
    legendLabels(u).forEach((th, k) => {
      th.tabIndex = 0;
      th.setAttribute("role", "button");
      th.setAttribute("aria-pressed", String(u.series[k + 1].show));
      th.addEventListener("keydown", (event) => {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        th.click();
      });
    });
  }

  let resizing;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      for (const { plot, canvas } of plots) {
        plot.setSize({ width: Math.max(240, canvas.clientWidth), height: HEIGHT });
      }
    }, 100);
  });
})();
