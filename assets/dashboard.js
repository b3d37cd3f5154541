// Progressive enhancement only: every page works without this file.
// A <select data-autosubmit> sends its form when changed (filters apply at once).
document.addEventListener("change", (event) => {
  const target = event.target;
  if (target instanceof HTMLSelectElement && target.dataset.autosubmit !== undefined) {
    target.form?.requestSubmit();
  }
});
