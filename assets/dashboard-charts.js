// Draws each <figure class="chart"> from the table it holds, so the chart and the table show
// the same numbers. Threshold columns (th[data-threshold]) are drawn dashed. When every chart
// is drawn, the page gets the performance mark "charts-drawn" (the benchmark waits for it)
// and each figure a data-drawn-points attribute (the tests count the points drawn).
(() => {
  const uPlot = globalThis.uPlot;
  const figures = [...document.querySelectorAll("figure.chart")];
  if (uPlot === undefined || figures.length === 0) return;
  const COLORS = ["#0a5bb5", "#b35900", "#0a5bb5", "#b35900"];
  const HEIGHT = 220;
  const stepped = uPlot.paths.stepped({ align: 1 });

  const cellValue = (cell) => {
    const value = Number(cell.textContent);
    return cell.textContent.trim() === "" || Number.isNaN(value) ? null : value;
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
        points: { show: !threshold && data[0].length <= 120 },
      };
    });
    let drawn = false;
    const plot = new uPlot(
      {
        width: Math.max(240, canvas.clientWidth),
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        series: [{ label: "Date" }, ...series],
        axes: [{}, { size: 64 }],
        legend: { live: false },
        hooks: {
          draw: [
            (u) => {
              figure.dataset.drawnPoints = String(u.data[0].length);
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
