// Self-checks the rendered page, for `cargo xtask book-check`: once
// everything has loaded, records on <body> whether every image loaded and
// every code block holds text.
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.querySelectorAll("main img"));
  var brokenImages = images.filter(function (img) {
    return !(img.complete && img.naturalWidth > 0);
  });
  var blocks = Array.prototype.slice.call(document.querySelectorAll("main pre code"));
  var emptyBlocks = blocks.filter(function (code) {
    return code.textContent.trim().length === 0;
  });
  var body = document.body;
  body.setAttribute("data-images", String(images.length));
  body.setAttribute("data-broken-images", String(brokenImages.length));
  body.setAttribute("data-code-blocks", String(blocks.length));
  body.setAttribute("data-empty-code-blocks", String(emptyBlocks.length));
  body.setAttribute("data-checked", "yes");
});
