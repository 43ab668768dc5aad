"use strict";
// Progressive enhancement only: every page works without this file.
document.addEventListener("change", (event) => {
  const select = event.target.closest("form.level select");
  if (select) select.form.requestSubmit();
});
