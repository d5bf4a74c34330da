// The "Paste your error" page: a text box and the answer of
// `casebook explain`, computed here from the generated index (explain.js).
// With #q=<text> in the address, the page opens with that text pasted.
// With #selftest in the address, it ranks the held-out texts and every
// indexed text and writes the first three answers of each into
// <pre id="selftest">, which the book check compares with the CLI's.
(function () {
  "use strict";

  function readJson(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  // A case's cause or fix, its `code` spans shown as code, as the book's
  // pages show them.
  function prose(text) {
    return el("span", {}, text.split("`").map(function (part, i) {
      return i % 2 === 1 ? el("code", {}, [part]) : part;
    }));
  }

  function field(name, value) {
    return el("div", { class: "explain-field" }, [el("strong", {}, [name + ": "]), value]);
  }

  function render(index, answer, out) {
    out.innerHTML = "";
    if (answer.errors.length > 0) {
      var list = el("ol", {}, answer.errors.map(function (e, i) {
        return el("li", {}, [el("code", {}, [e]), i === 0 ? " (the first: the likely cause)" : " (after the first: likely its consequence)"]);
      }));
      out.appendChild(el("p", {}, ["Errors in the text, in order:"]));
      out.appendChild(list);
    }
    if (answer.asynchronous) {
      out.appendChild(el("blockquote", {}, [index.matcher.asynchronous_hint.replace(/`/g, "")]));
    }
    if (answer.out_of_bounds) {
      out.appendChild(el("blockquote", { class: "explain-out-of-bounds" }, [index.matcher.out_of_bounds_note.replace(/`/g, "")]));
    }
    if (answer.matches.length === 0) {
      out.appendChild(el("p", { class: "explain-none" }, [
        "No reproduced case matches this text. casebook-explain prints the text of an issue to file for it.",
      ]));
      return;
    }
    if (answer.tied > 1) {
      out.appendChild(el("p", { class: "explain-tied" }, [
        index.matcher.tied_note.replace("{n}", String(answer.tied)),
      ]));
    }
    if (answer.by_description) {
      out.appendChild(el("blockquote", { class: "explain-by-description" }, [index.matcher.description_note]));
    }
    if (answer.unmatched_names.length > 0) {
      out.appendChild(el("p", { class: "explain-unnamed" }, [
        index.matcher.unnamed_note.replace("{names}", answer.unmatched_names.join(", ")),
      ]));
    }
    // Every case of a tie is shown: the text cannot tell them apart.
    answer.matches.slice(0, Math.max(3, answer.tied)).forEach(function (m, i) {
      var c = m.case;
      var title = c.book_page
        ? el("a", { href: c.book_page }, [c.scenario + ": " + c.title])
        : el("span", {}, [c.scenario + ": " + c.title]);
      var box = el("div", { class: "explain-match", "data-scenario": c.scenario }, [
        el("h3", {}, [String(i + 1) + ". ", title]),
        field("matched", el("span", {}, [m.matched.join(" | ")])),
        field("cause", prose(c.cause)),
        field(c.run ? "fix" : "what to check", prose(c.fix)),
      ]);
      if (c.reproduced && c.reproduced_on) {
        var r = c.reproduced_on;
        var torch = c.pytorch && r.pytorch ? ", PyTorch " + r.pytorch.split(",")[0] : "";
        box.appendChild(field("reproduced", el("span", {}, [
          r.gpu + ", driver " + r.driver + ", CUDA " + r.cuda + torch + ", commit " + r.commit.slice(0, 7) + " (" + r.date + ")",
        ])));
      } else if (c.reproduced) {
        box.appendChild(field("reproduced", el("span", {}, ["not in the committed GPU run yet: a case added since"])));
      } else {
        box.appendChild(field("reproduced", el("span", {}, ["no: " + (c.why_not_here || "")])));
      }
      if (c.reports.length) box.appendChild(field("reports", el("span", {}, [c.reports.join(", ")])));
      if (c.run) box.appendChild(field("run it", el("code", {}, [c.run.cargo])));
      out.appendChild(box);
    });
  }

  function selftest(index, heldout) {
    var ranker = new window.casebookExplain.Ranker(index);
    var lines = [];
    function top3(text) {
      return ranker.rank(text).slice(0, 3).map(function (m) { return m.case.scenario; }).join(",");
    }
    heldout.forEach(function (text, i) { lines.push("h" + i + " " + top3(text)); });
    index.cases.forEach(function (c, ci) {
      c.texts.forEach(function (t, ti) { lines.push("x" + ci + "." + ti + " " + top3(t.text)); });
    });
    var pre = document.getElementById("selftest") || el("pre", { id: "selftest" });
    pre.textContent = lines.join("\n");
    document.querySelector("main").appendChild(pre);
  }

  window.addEventListener("DOMContentLoaded", function () {
    var index = readJson("casebook-index");
    var box = document.getElementById("explain-input");
    var out = document.getElementById("explain-output");
    if (!index || !box || !out) return;
    if (window.location.hash === "#selftest") {
      selftest(index, readJson("casebook-heldout") || []);
      return;
    }
    var timer = null;
    function update() {
      var text = box.value;
      if (text.trim().length === 0) { out.innerHTML = ""; return; }
      render(index, window.casebookExplain.explain(index, text), out);
    }
    // #q=<text>: a link that opens the page with a text pasted.
    if (window.location.hash.startsWith("#q=")) {
      box.value = decodeURIComponent(window.location.hash.slice(3));
    }
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, 150);
    });
    update();
  });
})();
