// Self-checks the rendered page, for `cargo xtask book`: once everything
// has loaded, records on <body> whether every image loaded, every code
// block holds text, and every table fits the width of the page.
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.querySelectorAll("main img"));
  var brokenImages = images.filter(function (img) {
    return !(img.complete && img.naturalWidth > 0);
  });
  var blocks = Array.prototype.slice.call(document.querySelectorAll("main pre code"));
  var emptyBlocks = blocks.filter(function (code) {
    return code.textContent.trim().length === 0;
  });
  // A table wider than the column it sits in is cut off at the page's
  // edge (mdBook scrolls it sideways): its last columns are out of sight.
  var tables = Array.prototype.slice.call(document.querySelectorAll("main table"));
  var overflowing = tables.filter(function (table) {
    var container = table.parentElement;
    return table.scrollWidth > container.clientWidth + 1;
  });
  var body = document.body;
  body.setAttribute("data-images", String(images.length));
  body.setAttribute("data-broken-images", String(brokenImages.length));
  body.setAttribute("data-code-blocks", String(blocks.length));
  body.setAttribute("data-empty-code-blocks", String(emptyBlocks.length));
  body.setAttribute("data-tables", String(tables.length));
  body.setAttribute("data-overflowing-tables", String(overflowing.length));
  body.setAttribute(
    "data-overflowing-table-headers",
    overflowing
      .map(function (table) {
        var head = table.querySelector("tr");
        var cells = head ? Array.prototype.slice.call(head.children) : [];
        return cells
          .map(function (cell) {
            return cell.textContent.replace(/\s+/g, " ").trim();
          })
          .join(" | ");
      })
      .join(" / ")
  );
  body.setAttribute("data-checked", "yes");
});
