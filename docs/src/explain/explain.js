// The ranking of `casebook explain`, in the page: the same steps as
// crates/explain/src/features.rs and rank.rs, on the same generated index.
// The book check runs the held-out texts and every indexed text through
// both and requires the same first three answers in the same order.
(function () {
  "use strict";

  // The word lists and weights come from the index (its `matcher`, written
  // from crates/explain's constants): set by configure() before ranking.
  var GENERIC_WORDS = [];
  var FUNCTION_WORDS = [];
  var GENERIC_IDENTIFIERS = [];
  var GENERIC_PHRASES = [];
  var BOILERPLATE = [];
  var ERROR_NAME_PREFIXES = [];
  var UNITS = {};
  var ASYNCHRONOUS = [];
  var MIN_SCORE = 0;
  var FIRST_ERROR_WEIGHT = 0;
  var OTHER_ERROR_WEIGHT = 0;
  var SENTENCES = [];
  var SOURCE_EXTENSIONS = [];
  var FIGURE_WORDS = [];
  var LATER_DEVICE_WORDS = [];
  var DEVICE_NOUNS = [];
  var NOT_THE_FIRST_WORDS = [];
  var LIBRARY_ERRORS = [];
  var CODE_STARTS = [];
  var OUT_OF_MEMORY_ABBREVIATIONS = [];
  var OUT_OF_MEMORY_DENIALS = [];
  var MEMORY_WORDS = [];
  var MEMORY_QUALIFIERS = [];
  var RUNNING_OUT_WORDS = [];
  var OWN_WORDS_SAID = "";
  var OUT_OF_BOUNDS_REPORT = "";
  var FIRST_DEVICE_WORDS = [];
  var OTHER_DEVICES_WORDS = [];
  var MEMORY_AMOUNT_WORDS = [];
  var RELEASED_WORDS = [];
  var NEGATIONS = [];
  var OWN_WORD_CASES = 0;
  var API_NAME_PREFIXES = [];
  var API_NAME_WEIGHT = 0;
  var MISSING_CALL_WORDS = [];
  var MISSING_CALL_WINDOW = 0;
  var CLAUSE_MARKS = "";
  var EVERYDAY_WORDS = [];
  var STEM_ENDINGS = [];
  var DESCRIPTION_WORD_CASES = 0;
  var DESCRIPTION_MIN_WORDS = 0;
  var DESCRIPTION_MIN_SCORE = 0;
  var DESCRIPTION_SAID = "";

  function configure(matcher) {
    GENERIC_WORDS = matcher.generic_words;
    FUNCTION_WORDS = matcher.function_words;
    GENERIC_IDENTIFIERS = matcher.generic_identifiers;
    GENERIC_PHRASES = matcher.generic_phrases;
    BOILERPLATE = matcher.boilerplate;
    ERROR_NAME_PREFIXES = matcher.error_name_prefixes;
    SOURCE_EXTENSIONS = matcher.source_extensions;
    FIGURE_WORDS = matcher.figure_words;
    LATER_DEVICE_WORDS = matcher.later_device_words;
    DEVICE_NOUNS = matcher.device_nouns;
    NOT_THE_FIRST_WORDS = matcher.not_the_first_words;
    LIBRARY_ERRORS = matcher.library_errors;
    CODE_STARTS = matcher.code_starts;
    OUT_OF_MEMORY_ABBREVIATIONS = matcher.out_of_memory_abbreviations;
    OUT_OF_MEMORY_DENIALS = matcher.out_of_memory_denials;
    MEMORY_WORDS = matcher.memory_words;
    MEMORY_QUALIFIERS = matcher.memory_qualifiers;
    RUNNING_OUT_WORDS = matcher.running_out_words;
    OWN_WORDS_SAID = matcher.own_words_said;
    OUT_OF_BOUNDS_REPORT = matcher.out_of_bounds_report;
    FIRST_DEVICE_WORDS = matcher.first_device_words;
    OTHER_DEVICES_WORDS = matcher.other_devices_words;
    MEMORY_AMOUNT_WORDS = matcher.memory_amount_words;
    RELEASED_WORDS = matcher.released_words;
    NEGATIONS = matcher.negations;
    OWN_WORD_CASES = matcher.own_word_cases;
    API_NAME_PREFIXES = matcher.api_name_prefixes;
    API_NAME_WEIGHT = matcher.api_name_weight;
    MISSING_CALL_WORDS = matcher.missing_call_words;
    MISSING_CALL_WINDOW = matcher.missing_call_window;
    CLAUSE_MARKS = matcher.clause_marks;
    EVERYDAY_WORDS = matcher.everyday_words;
    STEM_ENDINGS = matcher.stem_endings;
    DESCRIPTION_WORD_CASES = matcher.description_word_cases;
    DESCRIPTION_MIN_WORDS = matcher.description_min_words;
    DESCRIPTION_MIN_SCORE = matcher.description_min_score;
    DESCRIPTION_SAID = matcher.description_said;
    UNITS = {};
    matcher.units.forEach(function (u) { UNITS[u[0]] = u[1]; });
    ASYNCHRONOUS = matcher.asynchronous;
    MIN_SCORE = matcher.min_score;
    FIRST_ERROR_WEIGHT = matcher.first_error_weight;
    OTHER_ERROR_WEIGHT = matcher.other_error_weight;
    SENTENCES = BOILERPLATE.map(function (x) {
      return lineTokens(x).filter(function (t) { return t !== BREAK; }).map(lower);
    });
  }

  var BREAK = null;

  function isErrorName(f) {
    // As is_error_name in features.rs: the number of the driver's Xid report.
    if (f.startsWith("xid:")) return true;
    if (!f.startsWith("id:")) return false;
    var w = f.slice(3);
    return ERROR_NAME_PREFIXES.some(function (p) { return w.startsWith(p); }) &&
      GENERIC_IDENTIFIERS.indexOf(w) < 0;
  }

  // As is_bare_name in features.rs: an identifier that is neither an
  // error's name nor an exception's.
  function isBareName(f) {
    if (f.indexOf("id:") !== 0) return false;
    var w = f.slice(3);
    return !isErrorName(f) && !w.endsWith("error") && !w.endsWith("exception");
  }

  function lines(text) {
    var out = text.split("\n").map(function (l) {
      return l.endsWith("\r") ? l.slice(0, -1) : l;
    });
    if (out.length && out[out.length - 1] === "") out.pop();
    return out;
  }

  // A frame of compute-sanitizer's report (where, by which thread, the
  // host's backtrace); its own lines are kept.
  function sanitizerFrame(line) {
    var t = line.trimStart();
    if (!t.startsWith("=========")) return false;
    var rest = t.slice(9).replace(/^=*/, "").trimStart();
    return ["at ", "by thread", "Device Frame", "Host Frame", "in ", "Saved host backtrace"].some(function (f) {
      return rest.startsWith(f);
    });
  }

  function withoutFrames(text) {
    var all = lines(text);
    var kept = [];
    var i = 0;
    while (i < all.length) {
      var line = all[i];
      var trimmed = line.trimStart();
      if (trimmed.startsWith('File "') && trimmed.indexOf('", line ') >= 0) {
        var indent = line.length - trimmed.length;
        var next = i + 1 < all.length ? all[i + 1] : "";
        var nextTrimmed = next.trimStart();
        var nextIndent = next.length - nextTrimmed.length;
        var codeLine = nextTrimmed.length > 0 && nextIndent > indent && !nextTrimmed.startsWith('File "');
        i += codeLine ? 2 : 1;
        continue;
      }
      if ((trimmed.length > 0 && /^[\^~ ]+$/.test(trimmed)) || sanitizerFrame(line)) {
        i += 1;
        continue;
      }
      kept.push(line);
      i += 1;
    }
    return kept;
  }

  function isWordChar(c) {
    return /^[A-Za-z0-9_]$/.test(c);
  }

  // As names_a_source_file in features.rs.
  function namesASourceFile(chunk) {
    var name = chunk.replace(/^[^A-Za-z0-9_]+|[^A-Za-z0-9_]+$/g, "").split(":")[0];
    var dot = name.lastIndexOf(".");
    if (dot <= 0) return false;
    return SOURCE_EXTENSIONS.indexOf(name.slice(dot + 1).toLowerCase()) >= 0;
  }

  // A chunk with the module path before an exception's name dropped
  // (features.rs, without_module_path).
  function withoutModulePath(chunk) {
    var dotted = chunk.search(/[^A-Za-z0-9_.]/);
    if (dotted < 0) dotted = chunk.length;
    var head = chunk.slice(0, dotted);
    var at = head.lastIndexOf(".");
    if (at < 0) return chunk;
    var last = head.slice(at + 1);
    var exception = ["Error", "Exception", "Warning"].some(function (e) {
      return last.length > e.length && last.slice(-e.length) === e;
    });
    return exception ? chunk.slice(at + 1) : chunk;
  }

  function lineTokens(line) {
    var out = [];
    var chunks = line.split(/\s+/).filter(function (c) { return c.length > 0; });
    chunks.forEach(function (chunk) {
      if (chunk.indexOf("/") >= 0 || chunk.indexOf("\\") >= 0 || namesASourceFile(chunk)) {
        out.push(BREAK);
        return;
      }
      chunk = withoutModulePath(chunk);
      var word = "";
      var chars = chunk + " ";
      for (var k = 0; k < chars.length; k++) {
        var c = chars[k];
        if (isWordChar(c)) {
          word += c;
        } else if (word.length > 0) {
          // As line_tokens in features.rs: a CUDA call's name keeps its digits.
          var figure = /[0-9]/.test(word) && !isApiName(word);
          // A unit after a figure is part of it: "2.00 GiB".
          var unitOfFigure = unitOf(word) !== null && out.length > 0 && out[out.length - 1] === BREAK;
          out.push(figure || unitOfFigure ? BREAK : (driverErrorName(word) || word));
          word = "";
        }
      }
    });
    return out;
  }

  // As driver_error_name in features.rs: managedCuda's ErrorInvalidContext
  // and CUDA.jl's ERROR_INVALID_CONTEXT are CUDA_ERROR_INVALID_CONTEXT.
  function driverErrorName(word) {
    if (word.slice(0, 6) === "ERROR_") {
      var rest = word.slice(6);
      var upperSnake = /^[A-Z_]*$/.test(rest);
      return upperSnake && rest.length > 1 && rest[0] !== "_" ? "CUDA_ERROR_" + rest : null;
    }
    if (word.slice(0, 5) !== "Error") return null;
    var tail = word.slice(5);
    var humps = (tail.match(/[A-Z]/g) || []).length;
    if (humps < 2 || !/^[A-Za-z]+$/.test(tail) || !/^[A-Z]/.test(tail)) return null;
    return "CUDA_ERROR" + tail.replace(/[A-Z]/g, function (c) { return "_" + c; }).toUpperCase();
  }

  function unitOf(word) {
    return Object.prototype.hasOwnProperty.call(UNITS, word) ? UNITS[word] : null;
  }

  function lower(w) {
    return w.replace(/[A-Z]/g, function (c) { return c.toLowerCase(); });
  }


  function removeBoilerplate(tokens) {
    var words = [];
    tokens.forEach(function (t, i) {
      if (t !== BREAK) words.push([i, lower(t)]);
    });
    var removed = tokens.map(function () { return false; });
    var k = 0;
    while (k < words.length) {
      var hit = null;
      for (var s = 0; s < SENTENCES.length && !hit; s++) {
        var sent = SENTENCES[s];
        if (sent.length === 0 || k + sent.length > words.length) continue;
        var all = true;
        for (var j = 0; j < sent.length; j++) {
          if (sent[j] !== words[k + j][1]) { all = false; break; }
        }
        if (all) hit = sent;
      }
      if (hit) {
        for (var m = k; m < k + hit.length; m++) removed[words[m][0]] = true;
        k += hit.length;
      } else {
        k += 1;
      }
    }
    var out = [];
    tokens.forEach(function (t, i) {
      if (removed[i]) {
        if (out.length === 0 || out[out.length - 1] !== BREAK) out.push(BREAK);
      } else {
        out.push(t);
      }
    });
    return out;
  }

  function tokens(text) {
    var all = [];
    withoutFrames(text).forEach(function (line) {
      all = all.concat(lineTokens(line));
      all.push(BREAK);
    });
    return outOfMemoryInWords(removeBoilerplate(all));
  }

  // As out_of_memory_in_words in features.rs: "OOMs", "out of GPU RAM",
  // "memory ran out" read as "out of memory".
  function outOfMemoryInWords(toks) {
    function is(k, list) {
      return k < toks.length && toks[k] !== BREAK && list.indexOf(lower(toks[k])) >= 0;
    }
    var out = [];
    function isOut(k, list) {
      return k >= 0 && out[k] !== BREAK && list.indexOf(lower(out[k])) >= 0;
    }
    // A denial, or a denial and an article, just before ("not OOM", "not an OOM").
    function said() {
      var last = out.length - 1;
      var denied = isOut(last, ["a", "an"]) ? isOut(last - 1, OUT_OF_MEMORY_DENIALS) : isOut(last, OUT_OF_MEMORY_DENIALS);
      if (denied) out.push(BREAK);
      else out.push("out", "of", "memory");
    }
    var i = 0;
    while (i < toks.length) {
      if (is(i, OUT_OF_MEMORY_ABBREVIATIONS)) {
        said();
        i += 1;
        continue;
      }
      if (is(i, ["out"]) && is(i + 1, ["of"])) {
        var qualified = is(i + 2, MEMORY_QUALIFIERS) ? 1 : 0;
        if (is(i + 2 + qualified, MEMORY_WORDS)) {
          said();
          i += 3 + qualified;
          continue;
        }
      }
      if (is(i, MEMORY_WORDS)) {
        var verbs = 0;
        while (verbs < 2 && is(i + 1 + verbs, RUNNING_OUT_WORDS)) verbs++;
        if (verbs > 0 && is(i + 1 + verbs, ["out"]) && !is(i + 2 + verbs, ["of"])) {
          out.push("out", "of", "memory");
          i += 2 + verbs;
          continue;
        }
      }
      out.push(toks[i]);
      i += 1;
    }
    return out;
  }

  // As score_key in rank.rs: a score to a millionth, so that the same
  // features summed in another order tie.
  function scoreKey(score) {
    return Math.round(score * 1e6);
  }

  function isIdentifier(word) {
    var inner = word.replace(/^_+|_+$/g, "").indexOf("_") >= 0;
    var humps = (word.match(/[a-z](?=[A-Z])/g) || []).length;
    var lowerStart = /^[a-z]/.test(word);
    var camel = humps >= 2 || (humps === 1 && lowerStart);
    return word.length > 3 && (inner || camel);
  }

  // As is_api_name in features.rs: a CUDA call's name (cudaMallocHost,
  // cuCtxCreate), not an error's, a generic one's or a library's (cuDNN).
  function isApiName(word) {
    var low = lower(word);
    var shaped = API_NAME_PREFIXES.some(function (p) {
      return word.startsWith(p) && /^[A-Z][a-z]/.test(word.slice(p.length));
    });
    return shaped && isIdentifier(word) && !isErrorName("id:" + low) && GENERIC_IDENTIFIERS.indexOf(low) < 0;
  }

  // As api_mentions in features.rs: every mention of a CUDA call, and
  // whether the words before it in its clause say it is not made.
  function apiMentions(text) {
    var out = [];
    withoutFrames(text).forEach(function (line) {
      var clauses = [""];
      for (var c = 0; c < line.length; c++) {
        if (CLAUSE_MARKS.indexOf(line[c]) >= 0) clauses.push("");
        else clauses[clauses.length - 1] += line[c];
      }
      clauses.forEach(function (clause) {
        var toks = lineTokens(clause);
        toks.forEach(function (t, i) {
          if (t === BREAK || !isApiName(t)) return;
          var missing = false;
          for (var k = i - 1; k >= 0 && k >= i - MISSING_CALL_WINDOW; k--) {
            if (toks[k] === BREAK) break;
            if (MISSING_CALL_WORDS.indexOf(lower(toks[k])) >= 0) { missing = true; break; }
          }
          out.push({ feature: "id:" + lower(t), missing: missing });
        });
      });
    });
    return out;
  }

  // As is_note in features.rs: a warning, information or a table's row,
  // unless it speaks of an error.
  function isNote(line) {
    var t = line.trim();
    var low = lower_(t);
    // A table's row whatever its cells say (is_note in features.rs).
    if (isTableRow(t)) return true;
    if (["error", "fail", "fault"].some(function (w) { return low.indexOf(w) >= 0; })) return false;
    var levelWord = low.indexOf("warning:") >= 0 ||
      t.split(/[^A-Za-z0-9]/).some(function (w) { return w === "WARNING" || w === "INFO"; });
    var unbracketed = t.startsWith("[") ? t.slice(1) : t;
    var levelLetter = unbracketed.length >= 2 && (unbracketed[0] === "W" || unbracketed[0] === "I") &&
      (/[0-9]/.test(unbracketed[1]) || (unbracketed[1] === " " && t.startsWith("[")));
    var colon = t.indexOf(": ");
    var afterTime = /^[0-9]/.test(t) && colon >= 0 &&
      (t.startsWith("I ", colon + 2) || t.startsWith("W ", colon + 2));
    var setting = false;
    if (colon >= 0) {
      var name = t.slice(0, colon);
      var value = t.slice(colon + 2);
      setting = /[A-Za-z]/.test(name) && value.trim().length > 0 &&
        !lineTokens(value).some(function (w) { return w !== BREAK; });
    }
    return levelWord || levelLetter || afterTime || setting;
  }

  function saysError(line) {
    var lower = lower_(line);
    return line.indexOf("Error:") >= 0 || line.indexOf("Exception:") >= 0 ||
      lower.indexOf("error:") >= 0 || line.indexOf("Assertion `") >= 0 ||
      line.indexOf("Check failed:") >= 0 ||
      LIBRARY_ERRORS.some(function (e) { return lower.indexOf(e) >= 0; });
  }

  // As is_code in features.rs: a statement of the user's code (an import,
  // a definition, an assignment, a call alone on its line), commented out
  // or not, and no message: it names no error and says it reports none.
  function isCode(line) {
    var t = line.trim();
    var startsCode = function (x) {
      return CODE_STARTS.some(function (s) { return x.startsWith(s); });
    };
    if (startsCode(t)) return true;
    if (t.startsWith("//")) t = t.slice(2);
    else if (t.startsWith("#")) t = t.slice(1);
    t = t.trimStart();
    var namesAnError = lineTokens(t).some(function (w) {
      return w !== BREAK && isErrorName("id:" + lower(w));
    });
    if (saysError(t) || namesAnError) return false;
    var imports = t.startsWith("from ") && t.indexOf(" import ") >= 0;
    var eq = t.indexOf(" = ");
    var assigned = false;
    if (eq >= 0) {
      var target = t.slice(0, eq);
      assigned = target.length > 0 && target.split(/\s+/).filter(function (w) { return w; }).length <= 2 &&
        /^[A-Za-z0-9_.\[\]*&<>:, ]+$/.test(target);
    }
    var called = false;
    var paren = t.indexOf("(");
    if (paren >= 0) {
      var name = t.slice(0, paren);
      called = /^[A-Za-z_]/.test(name) && /^[A-Za-z0-9_.:]+$/.test(name) &&
        !["Error", "Exception", "Warning"].some(function (e) { return name.endsWith(e); }) &&
        (t.endsWith(")") || t.endsWith(");"));
    }
    return startsCode(t) || imports || assigned || called;
  }

  // As without_code in features.rs: the text without its code lines.
  function withoutCode(text) {
    return lines(text).filter(function (l) { return !isCode(l); }).join("\n");
  }

  // As is_table_row in features.rs: a row of a table, as nvidia-smi prints.
  function isTableRow(line) {
    var t = line.trim();
    return t.startsWith("|") || t.startsWith("+-") || t.startsWith("+=");
  }

  // As without_rows in features.rs: the text without its tables' rows.
  function withoutRows(text) {
    return lines(text).filter(function (l) { return !isTableRow(l); }).join("\n");
  }

  // As without_notes in features.rs: the text without its warnings,
  // information lines and settings.
  function withoutNotes(text) {
    return lines(text).filter(function (l) { return !isNote(l); }).join("\n");
  }

  function lower_(s) {
    return s.replace(/[A-Z]/g, function (c) { return c.toLowerCase(); });
  }

  // As phrases() in features.rs: every feature with the tokens it stands for.
  // A pasted text (pasted true) also gives every two consecutive words.
  function isGeneric(w) {
    return GENERIC_WORDS.indexOf(w) >= 0 || GENERIC_IDENTIFIERS.indexOf(w) >= 0;
  }

  // As specific in features.rs: a word neither generic nor a function word,
  // two such where the phrase holds a function word.
  // Telling words that are one of GENERIC_PHRASES ("memory usage") tell nothing.
  function specific(words) {
    var isFunction = function (w) { return FUNCTION_WORDS.indexOf(w) >= 0; };
    var telling = words.filter(function (w) { return !isGeneric(w) && !isFunction(w); });
    return telling.length >= (words.some(isFunction) ? 2 : 1) && !genericPhrase(telling);
  }

  // As generic_phrase in features.rs: these words, in order, are a generic phrase.
  function genericPhrase(words) {
    return GENERIC_PHRASES.indexOf(words.join(" ")) >= 0;
  }

  // Two words alone between breaks, a whole message: one says what failed.
  function wholeMessage(words) {
    return words.some(function (w) { return !isGeneric(w) && FUNCTION_WORDS.indexOf(w) < 0; }) &&
      !genericPhrase(words);
  }

  // As content_word in features.rs: neither generic nor a function word.
  function contentWord(w) {
    return !isGeneric(w) && FUNCTION_WORDS.indexOf(w) < 0;
  }

  // As content_pairs in features.rs: consecutive words that both say what failed.
  function contentPairs(words) {
    var out = [];
    for (var k = 0; k + 1 < words.length; k++) {
      if (contentWord(words[k]) && contentWord(words[k + 1]) && !genericPhrase([words[k], words[k + 1]])) {
        out.push("w:" + words[k] + " " + words[k + 1]);
      }
    }
    return out;
  }

  // As content_pairs_of in features.rs: a text's pairs, no break between them.
  function contentPairsOf(toks) {
    var out = new Set();
    var run = [];
    toks.concat([BREAK]).forEach(function (t) {
      if (t !== BREAK) { run.push(lower(t)); return; }
      contentPairs(run).forEach(function (p) { out.add(p); });
      run = [];
    });
    return out;
  }

  function phrases(toks, pasted) {
    var out = [];
    var run = [];
    function words(idx) {
      return idx.map(function (j) { return lower(toks[j]); });
    }
    function phrase(idx) {
      return { feature: "w:" + idx.map(function (j) { return lower(toks[j]); }).join(" "), tokens: idx.slice() };
    }
    for (var i = 0; i <= toks.length; i++) {
      var t = i < toks.length ? toks[i] : BREAK;
      var errorName = t !== BREAK && isIdentifier(t) && isErrorName("id:" + lower(t));
      var genericName = t !== BREAK && GENERIC_IDENTIFIERS.indexOf(lower(t)) >= 0;
      if (errorName) out.push({ feature: "id:" + lower(t), tokens: [i] });
      if (t === BREAK || errorName || genericName) {
        if (run.length === 2 && wholeMessage(words(run))) out.push(phrase(run));
        run = [];
        continue;
      }
      if (isIdentifier(t)) out.push({ feature: "id:" + lower(t), tokens: [i] });
      run.push(i);
      if (pasted && run.length >= 2) {
        var pair = run.slice(run.length - 2);
        if (specific(words(pair))) out.push(phrase(pair));
      }
      if (run.length >= 3) {
        var tri = run.slice(run.length - 3);
        if (specific(words(tri))) out.push(phrase(tri));
      }
    }
    return out;
  }

  function featuresOf(toks, pasted) {
    var out = new Set();
    phrases(toks, pasted).forEach(function (p) { out.add(p.feature); });
    return out;
  }

  // As Rust's f64 parse reads digits and one dot: "1.", ".5", "1.5".
  function parseNumber(s) {
    return /^([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(s) ? parseFloat(s) : NaN;
  }

  function sizeAfter(text, marker) {
    var at = text.indexOf(marker);
    if (at < 0) return null;
    var rest = text.slice(at + marker.length);
    var number = /^[0-9.]*/.exec(rest)[0];
    rest = rest.slice(number.length).trimStart();
    var word = /^[A-Za-z]*/.exec(rest)[0];
    var n = parseNumber(number);
    return isNaN(n) || unitOf(word) === null ? null : n * unitOf(word);
  }

  function sizeBefore(text, marker) {
    var at = text.indexOf(marker);
    if (at < 0) return null;
    var head = text.slice(0, at).trimEnd();
    var word = /[A-Za-z]*$/.exec(head)[0];
    if (unitOf(word) === null) return null;
    head = head.slice(0, head.length - word.length).trimEnd();
    var number = /[0-9.]*$/.exec(head)[0];
    var n = parseNumber(number);
    return isNaN(n) ? null : n * UNITS[word];
  }

  // As OomSizes::read in features.rs.
  function oomSizes(text) {
    var request = sizeAfter(text, "Tried to allocate ");
    if (request === null) return null;
    var allocated = sizeBefore(text, " is allocated by PyTorch");
    if (allocated === null) allocated = sizeBefore(text, " already allocated");
    var unallocated = sizeBefore(text, " is reserved by PyTorch but unallocated");
    if (unallocated === null) {
      var reserved = sizeBefore(text, " reserved in total by PyTorch");
      if (reserved !== null && allocated !== null) unallocated = reserved - allocated;
    }
    if (unallocated === null) unallocated = sizeBefore(text, " cached)");
    if (unallocated === null) unallocated = sizeBefore(text, " cache)");
    var capacity = sizeAfter(text, "total capacity of ");
    if (capacity === null) capacity = sizeBefore(text, " total capacity");
    var free = sizeBefore(text, " is free");
    if (free === null) free = sizeBefore(text, " free;");
    return {
      request: request,
      capacity: capacity,
      free: free,
      allocated: allocated,
      unallocated: unallocated,
      inUse: sizeAfter(text, "this process has "),
      allowed: sizeBefore(text, " allowed")
    };
  }

  // As figures in features.rs: what an out-of-memory message's sizes say,
  // and whether the text names a GPU other than the first.
  function figures(text) {
    var out = oomFigures(text);
    // A line that says the first GPU holds memory for the others names the
    // later GPUs as those others (features.rs, figures).
    if (text.split("\n").some(function (l) {
      return namesALaterDevice(l) && !firstGpuHoldsMemoryForOthers(l);
    })) out.push("fig:a-device-other-than-the-first");
    if (text.split("\n").some(isDeviceAssertion)) out.push("fig:a-kernel-s-assertion-failed");
    if (namesAStreamCaptureState(text)) out.push("fig:a-stream-capture-state");
    if (text.split("\n").some(firstGpuHoldsMemoryForOthers) || processTableShowsTheFirstGpuForOthers(text)) {
      out.push("fig:the-first-gpu-holds-memory-for-others");
    }
    return out;
  }

  // As process_table_shows_the_first_gpu_for_others in features.rs: one
  // process in nvidia-smi's table on the first GPU and again on another.
  var PROCESS_TYPES = ["C", "G", "C+G", "M", "M+C"];
  function processTableShowsTheFirstGpuForOthers(text) {
    var gpusOf = new Map();
    text.split("\n").forEach(function (line) {
      var cells = line.trim().replace(/^\|+/, "").replace(/\|+$/, "").split(/\s+/).filter(function (c) {
        return c.length > 0;
      });
      if (cells.length === 0 || !/^[0-9]+$/.test(cells[0])) return;
      var gpu = parseInt(cells[0], 10);
      var kind = cells.findIndex(function (c) { return PROCESS_TYPES.indexOf(c) >= 0; });
      if (kind < 2) return;
      var pid = cells[kind - 1];
      if (/^[0-9]+$/.test(pid) && /MiB$/.test(cells[cells.length - 1])) {
        if (!gpusOf.has(pid)) gpusOf.set(pid, new Set());
        gpusOf.get(pid).add(gpu);
      }
    });
    return Array.from(gpusOf.values()).some(function (gpus) {
      return gpus.has(0) && Array.from(gpus).some(function (g) { return g > 0; });
    });
  }

  // As another_backend_s_out_of_memory in features.rs.
  var OTHER_BACKENDS_OUT_OF_MEMORY = ["mps backend out of memory", "xpu out of memory"];
  function anotherBackendsOutOfMemory(text) {
    var low = lower_(text);
    return OTHER_BACKENDS_OUT_OF_MEMORY.some(function (b) { return low.indexOf(b) >= 0; }) &&
      low.indexOf("cuda") < 0 && low.indexOf("cublas") < 0 && low.indexOf("cudnn") < 0;
  }

  // As names_a_stream_capture_state in features.rs: stream capture's
  // states and errors, read as one family.
  var STREAM_CAPTURE_NAMES = [
    "cudaerrorstreamcapture", "cudastreamcapturestatus", "cuda_error_stream_capture_", "cu_stream_capture_status_",
  ];
  function namesAStreamCaptureState(text) {
    var low = lower_(text);
    return STREAM_CAPTURE_NAMES.some(function (n) { return low.indexOf(n) >= 0; });
  }

  // As reports_a_build_failure in features.rs: a compiler's refusal.
  var BUILD_FAILURES = ["nvcc fatal", "ptxas fatal"];
  function reportsABuildFailure(text) {
    return text.split("\n").some(function (l) {
      var low = lower_(l.trimStart());
      return BUILD_FAILURES.some(function (b) { return low.startsWith(b); });
    });
  }

  // As first_gpu_holds_memory_for_others in features.rs: a line that names
  // the first GPU (not in an out-of-memory message's frame), the other GPUs
  // or a later one by number, and memory.
  function firstGpuHoldsMemoryForOthers(line) {
    var low = lower_(line);
    var alnum = function (c) { return c !== undefined && /[a-z0-9]/.test(c); };
    var startsAWord = function (at) { return at === 0 || !alnum(low[at - 1]); };
    function mentions(words, frame) {
      return words.some(function (w) {
        var at = low.indexOf(w);
        while (at >= 0) {
          var end = at + w.length;
          // "other than device 0" names the first GPU as what the device is not.
          var before = low.slice(0, at).trimEnd();
          var negated = NOT_THE_FIRST_WORDS.some(function (n) { return before.endsWith(n); });
          if (startsAWord(at) && !alnum(low[end]) && !negated &&
            !frame.some(function (f) { return low.startsWith(f, end); })) return true;
          at = low.indexOf(w, at + 1);
        }
        return false;
      });
    }
    var first = mentions(FIRST_DEVICE_WORDS, [" has a total capacity", ";"]);
    var laterByNumber = ["gpu", "gpus", "cuda:", "gpu:", "rank", "device"].some(function (prefix) {
      var at = low.indexOf(prefix);
      while (at >= 0) {
        var rest = low.slice(at + prefix.length).replace(/^ +/, "");
        var digits = /^[0-9]*/.exec(rest)[0];
        if (startsAWord(at) && digits.length > 0 && parseInt(digits, 10) >= 1 && !alnum(rest[digits.length])) {
          return true;
        }
        at = low.indexOf(prefix, at + 1);
      }
      return false;
    });
    var others = laterByNumber || mentions(OTHER_DEVICES_WORDS, []) || notTheFirstDevice(low);
    // "an illegal memory access" is an access, no amount of memory.
    var words = low.split(/[^a-z0-9]/).filter(function (w) { return w.length > 0; });
    var memory = words.some(function (w, i) {
      return MEMORY_AMOUNT_WORDS.indexOf(w) >= 0 && words[i + 1] !== "access";
    });
    // As features.rs: a clause that names the first GPU and says its memory
    // was released says the first GPU does not hold it.
    var clauses = [];
    low.split(/[,;.!?]/).forEach(function (c) { clauses = clauses.concat(c.split(" but ")); });
    var releasedFirst = clauses.some(function (clause) {
      var cw = clause.split(/[^a-z0-9]/).filter(function (w) { return w.length > 0; });
      var namesFirst = FIRST_DEVICE_WORDS.some(function (w) {
        var at = clause.indexOf(w);
        while (at >= 0) {
          if ((at === 0 || !alnum(clause[at - 1])) && !alnum(clause[at + w.length])) return true;
          at = clause.indexOf(w, at + 1);
        }
        return false;
      });
      return namesFirst && cw.some(function (w, i) {
        return RELEASED_WORDS.indexOf(w) >= 0 &&
          !cw.slice(0, i).some(function (x) { return NEGATIONS.indexOf(x) >= 0; });
      });
    });
    return first && others && memory && !releasedFirst;
  }

  // As device_words in features.rs: runs of letters, digits and _, and !=.
  function deviceWords(low) {
    return low.match(/!=|[a-z0-9_]+/g) || [];
  }

  // As not_the_first_device in features.rs: a 0 after a not-the-first word
  // ("a GPU != 0", "the index not being 0"), with a device's noun between
  // them or at most two words before them.
  function notTheFirstDevice(low) {
    var words = deviceWords(low);
    var noun = function (w) { return DEVICE_NOUNS.indexOf(w) >= 0; };
    for (var j = 0; j < words.length; j++) {
      if (words[j] !== "0") continue;
      var named = j > 0 && noun(words[j - 1]);
      var end = named ? j - 1 : j;
      var hit = NOT_THE_FIRST_WORDS.some(function (n) {
        var not = n.split(" ");
        if (end < not.length) return false;
        var start = end - not.length;
        for (var k = 0; k < not.length; k++) if (words[start + k] !== not[k]) return false;
        return named || words.slice(Math.max(0, start - 2), start).some(noun);
      });
      if (hit) return true;
    }
    return false;
  }

  // As is_device_assertion in features.rs: what a kernel's failed assert prints.
  function isDeviceAssertion(line) {
    return line.indexOf("block: [") >= 0 && line.indexOf("thread: [") >= 0 &&
      line.indexOf("Assertion `") >= 0 && line.indexOf("failed") >= 0;
  }

  // As names_a_later_device in features.rs: `cuda:1`, `/device:GPU:2`,
  // "GPU 1 or 2", "a GPU != 0"; not PyTorch's out-of-memory frame.
  function namesALaterDevice(text) {
    var low = lower_(text);
    if (LATER_DEVICE_WORDS.some(function (w) { return low.indexOf(w) >= 0; })) return true;
    function numbered(prefixes, spaced) {
      return prefixes.some(function (prefix) {
        var at = low.indexOf(prefix);
        while (at >= 0) {
          var startsAWord = at === 0 || !/[a-z0-9]/.test(low[at - 1]);
          var rest = low.slice(at + prefix.length);
          if (spaced) rest = rest.replace(/^ +/, "");
          var digits = /^[0-9]*/.exec(rest)[0];
          var after = rest.slice(digits.length);
          var endsAWord = after.length === 0 || !/[a-z0-9]/.test(after[0]);
          // A row of a list of the machine's GPUs, at the start of its line
          // ("GPU 1: GeForce GTX 1070 Ti"): every GPU, none in particular.
          var lineBefore = low.slice(0, at).split("\n").pop();
          var listed = after.startsWith(":") && lineBefore.trim() === "";
          var frame = after.startsWith(" has a total capacity") || after.startsWith(";") || listed;
          if (startsAWord && digits.length > 0 && parseInt(digits, 10) >= 1 &&
            (!spaced || (endsAWord && !frame))) return true;
          at = low.indexOf(prefix, at + 1);
        }
        return false;
      });
    }
    return numbered(["cuda:", "gpu:"], false) || numbered(["gpu ", "gpus "], true) || notTheFirstDevice(low);
  }

  function oomFigures(text) {
    var m = oomSizes(text);
    if (m === null) return [];
    if (m.capacity !== null && m.request > m.capacity) return ["fig:request-exceeds-capacity"];
    var u = m.unallocated;
    var mine = m.inUse;
    if (mine === null && m.allocated !== null) mine = m.allocated + (u === null ? 0 : u);
    // Another process holding a quarter of the GPU is read first.
    if (m.capacity !== null && m.free !== null && mine !== null && m.capacity - m.free - mine >= m.capacity / 4.0) {
      return ["fig:memory-held-outside-this-process"];
    }
    var pieces = u !== null && (u >= m.request ||
      (u + (m.free === null ? 0 : m.free) >= m.request &&
        (u >= m.request / 2.0 || m.capacity === null || u >= m.capacity / 20.0)));
    if (pieces) return ["fig:unallocated-reserve-holds-request"];
    // What the process may hold: the GPU, or the share the program allowed.
    var room = m.capacity;
    if (room !== null && m.allowed !== null) room = Math.min(room, m.allowed);
    if (room !== null && mine !== null &&
      (m.allocated === null ? 0 : m.allocated) + (u === null ? 0 : u) >= 0.75 * room) {
      return ["fig:this-process-holds-the-gpu"];
    }
    return [];
  }

  // As xids in features.rs: the numbers of the driver's Xid reports.
  function xids(text) {
    var low = lower_(text);
    var out = [];
    var word = function (c) { return c !== undefined && /[a-z0-9_]/.test(c); };
    var skipBlanks = function (i) {
      while (low[i] === " " || low[i] === "\t") i++;
      return i;
    };
    var from = 0;
    for (;;) {
      var start = low.indexOf("xid", from);
      if (start < 0) break;
      from = start + 3;
      if ((start > 0 && word(low[start - 1])) || word(low[from])) continue;
      var i = skipBlanks(from);
      // The device, as (PCI:0000:07:00).
      if (low[i] === "(") {
        var close = low.indexOf(")", i);
        if (close < 0) continue;
        i = close + 1;
      }
      i = skipBlanks(i);
      if (low[i] === ":") i++;
      i = skipBlanks(i);
      var digits = /^[0-9]*/.exec(low.slice(i))[0];
      var feature = "xid:" + digits;
      if (digits.length > 0 && out.indexOf(feature) < 0) out.push(feature);
    }
    return out;
  }

  function features(text) {
    var f = featuresOf(tokens(text), false);
    figures(text).forEach(function (x) { f.add(x); });
    xids(text).forEach(function (x) { f.add(x); });
    return f;
  }

  function lineFeatures(line) {
    var f = featuresOf(outOfMemoryInWords(removeBoilerplate(lineTokens(line))), true);
    figures(line).forEach(function (x) { f.add(x); });
    xids(line).forEach(function (x) { f.add(x); });
    return f;
  }

  // As word in vocabulary.rs: lowercased, a plural's ending dropped; null
  // for a generic or function word, or two letters or fewer.
  function vocabularyWord(w) {
    w = lower(w);
    if (w.length < 3 || GENERIC_WORDS.indexOf(w) >= 0 || FUNCTION_WORDS.indexOf(w) >= 0 ||
      GENERIC_IDENTIFIERS.indexOf(w) >= 0) return null;
    var ends = function (e) { return w.length >= e.length && w.slice(-e.length) === e; };
    if (w.length > 4 && ends("ies")) return w.slice(0, -3) + "y";
    if (ends("sses") || ends("ches") || ends("shes") || ends("xes")) return w.slice(0, -2);
    if (w.length > 3 && ends("s") && !ends("ss") && !ends("us") && !ends("is")) return w.slice(0, -1);
    return w;
  }

  // As words in vocabulary.rs: a text's words, each once, in its order.
  function vocabularyWords(text) {
    var out = [];
    tokens(text).forEach(function (t) {
      if (t === BREAK) return;
      var w = vocabularyWord(t);
      if (w !== null && out.indexOf(w) < 0) out.push(w);
    });
    return out;
  }

  // As stem in description.rs: each ending of STEM_ENDINGS in turn (the
  // first that fits), while four letters or more remain.
  function stem(word) {
    var w = word;
    for (;;) {
      var e = null;
      for (var k = 0; k < STEM_ENDINGS.length; k++) {
        var x = STEM_ENDINGS[k];
        if (w.length >= x.length + 4 && w.slice(-x.length) === x) { e = x; break; }
      }
      if (e === null) return w;
      w = w.slice(0, w.length - e.length);
    }
  }

  // As words_as_written in description.rs: each word as the text writes it
  // and its stem, everyday words left out, one a stem.
  function descriptionWordsAsWritten(text) {
    var out = [];
    tokens(text).forEach(function (t) {
      if (t === BREAK) return;
      var w = vocabularyWord(t);
      if (w === null || EVERYDAY_WORDS.indexOf(w) >= 0 || EVERYDAY_WORDS.indexOf(lower(t)) >= 0) return;
      var s = stem(w);
      if (!out.some(function (o) { return o[1] === s; })) out.push([t, s]);
    });
    return out;
  }

  function descriptionWords(text) {
    return descriptionWordsAsWritten(text).map(function (o) { return o[1]; });
  }

  // As case_words in vocabulary.rs: the words of a case's heads (its
  // title, cause, fix...), and those two or more of the sources of its
  // texts use, each read by wordsOf.
  function caseWords(c, heads, wordsOf) {
    var mine = new Set();
    heads.forEach(function (t) {
      wordsOf(t).forEach(function (w) { mine.add(w); });
    });
    var sources = new Map();
    c.texts.forEach(function (t) {
      wordsOf(t.text).forEach(function (w) {
        if (!sources.has(w)) sources.set(w, new Set());
        sources.get(w).add(t.from);
      });
    });
    sources.forEach(function (from, w) { if (from.size >= 2) mine.add(w); });
    return mine;
  }

  // As rare_words in vocabulary.rs: each case's words among mine[i] that at
  // most `most` cases use, as used counts them, each weighing
  // ln(1 + cases / cases using it).
  function rareWords(mine, used, most) {
    var users = new Map();
    used.forEach(function (words) {
      words.forEach(function (w) { users.set(w, (users.get(w) || 0) + 1); });
    });
    var n = Math.max(used.length, 1);
    return mine.map(function (words) {
      var rare = new Map();
      words.forEach(function (w) {
        var k = users.get(w);
        if (k <= most) rare.set(w, Math.log(1 + n / k));
      });
      return rare;
    });
  }

  // As Description::new in description.rs: each case's distinctive words
  // (of its description, used by few cases anywhere), with their weights.
  function describedWords(index) {
    var heads = function (c) { return [c.scenario.replace(/-/g, " "), c.title, c.cause, c.fix]; };
    var used = index.cases.map(function (c) {
      var words = new Set();
      heads(c).concat(c.texts.map(function (t) { return t.text; })).forEach(function (t) {
        descriptionWords(t).forEach(function (w) { words.add(w); });
      });
      return words;
    });
    var described = index.cases.map(function (c) { return caseWords(c, heads(c), descriptionWords); });
    return rareWords(described, used, DESCRIPTION_WORD_CASES);
  }

  // As Vocabulary::new in vocabulary.rs: each case's own words, with their
  // weights.
  function ownWords(index) {
    var candidates = index.cases.map(function (c) {
      return caseWords(c, [c.title, c.cause, c.fix], vocabularyWords);
    });
    return rareWords(candidates, candidates, OWN_WORD_CASES);
  }

  function byteOrder(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function Ranker(index) {
    configure(index.matcher);
    this.index = index;
    this.textFeatures = index.cases.map(function (c) {
      return c.texts.map(function (t) { return features(t.text); });
    });
    var holders = new Map();
    this.textFeatures.forEach(function (texts) {
      var set = new Set();
      texts.forEach(function (f) { f.forEach(function (x) { set.add(x); }); });
      set.forEach(function (f) { holders.set(f, (holders.get(f) || 0) + 1); });
    });
    var n = Math.max(index.cases.length, 1);
    this.weight = new Map();
    var self = this;
    holders.forEach(function (k, f) { self.weight.set(f, Math.log(1 + n / k)); });
    this.own = ownWords(index);
    this.described = describedWords(index);
    // As api_names, missing_calls and api_weight in rank.rs: each case's
    // CUDA calls, those whose absence is its failure, and their weights.
    this.apiNames = index.cases.map(function (c) {
      var out = new Set();
      [c.title, c.cause, c.fix].concat(c.texts.map(function (t) { return t.text; })).forEach(function (t) {
        apiMentions(t).forEach(function (m) { out.add(m.feature); });
      });
      return out;
    });
    this.missingCalls = index.cases.map(function (c) {
      var told = [];
      [c.title, c.cause].concat(c.texts.map(function (t) { return t.text; })).forEach(function (t) {
        told = told.concat(apiMentions(t));
      });
      var out = new Set();
      told.forEach(function (m) {
        var made = told.some(function (o) { return o.feature === m.feature && !o.missing; });
        if (m.missing && !made) out.add(m.feature);
      });
      return out;
    });
    var apiHolders = new Map();
    this.apiNames.forEach(function (names) {
      names.forEach(function (f) { apiHolders.set(f, (apiHolders.get(f) || 0) + 1); });
    });
    this.apiWeight = new Map();
    apiHolders.forEach(function (k, f) { self.apiWeight.set(f, API_NAME_WEIGHT * Math.log(1 + n / k)); });
    // The features of the texts the cases' variants returned in the run.
    this.runFeatures = new Set();
    index.cases.forEach(function (c, ci) {
      c.texts.forEach(function (t, ti) {
        if (t.from !== "run") return;
        self.textFeatures[ci][ti].forEach(function (f) {
          if (f.indexOf("fig:") !== 0) self.runFeatures.add(f);
        });
      });
    });
    this.buildMessages();
  }

  // As message_features in rank.rs: what some case's text holds in an
  // error's message, not in a user's prose.
  Ranker.prototype.buildMessages = function () {
    var self = this;
    this.messageFeatures = new Set();
    this.index.cases.forEach(function (c) {
      c.texts.forEach(function (t) {
        withoutFrames(t.text).forEach(function (line) {
          var f = features(line);
          var message = t.from === "run" || line.trimStart().startsWith("=========") || saysError(line) ||
            Array.from(f).some(isErrorName);
          if (message) f.forEach(function (x) { self.messageFeatures.add(x); });
        });
      });
    });
    // As said_pairs in rank.rs: each case's pairs of words that say what failed.
    this.saidPairs = this.index.cases.map(function (c) {
      var out = new Set();
      c.texts.forEach(function (t) { contentPairsOf(tokens(t.text)).forEach(function (p) { out.add(p); }); });
      return out;
    });
  };

  Ranker.prototype.sayers = function (pair) {
    return this.saidPairs.filter(function (p) { return p.has(pair); }).length;
  };

  // As pair_weight in rank.rs: a pair's weight, by the cases that say it.
  Ranker.prototype.pairWeight = function (pair) {
    return Math.log(1 + Math.max(this.index.cases.length, 1) / this.sayers(pair));
  };

  // As errors in rank.rs: warnings, information and table rows start no
  // error, unless the text has no other.
  Ranker.prototype.errors = function (text) {
    var errs = this.errorsNoting(text, true);
    return errs.length ? errs : this.errorsNoting(text, false);
  };

  Ranker.prototype.errorsNoting = function (text, passNotes) {
    var self = this;
    var out = [];
    // What the lines before this one were in: "nothing", "error" or "note".
    var within = "nothing";
    withoutFrames(text).forEach(function (line) {
      // The user's code starts no error and continues none.
      if (isCode(line)) { within = "nothing"; return; }
      var f = Array.from(lineFeatures(line)).filter(function (x) { return self.weight.has(x); });
      // A line that only announces what follows ("Last error:") continues the error it is in.
      if (lower(line.trim()).endsWith("error:")) return;
      if (passNotes && isNote(line)) { within = "note"; return; }
      var marked = saysError(line);
      // A figure (a device after the first, an out-of-memory message's sizes)
      // is a fact about an error, not one: it starts none (rank.rs, errors_noting).
      var telling = f.some(function (x) { return x.indexOf("fig:") !== 0; });
      if (!marked && !telling) { within = "nothing"; return; }
      if (!marked && within === "note") return;
      if (!marked && within === "error") {
        if (out.length) f.forEach(function (x) { out[out.length - 1].features.add(x); });
        return;
      }
      var trimmed = line.trim();
      var key = f.slice().sort(byteOrder).join("\n");
      var repeated = out.some(function (e) {
        return f.length === 0 ? e.line === trimmed : Array.from(e.features).sort(byteOrder).join("\n") === key;
      });
      within = repeated ? "nothing" : "error";
      if (!repeated) out.push({ line: trimmed, features: new Set(f) });
    });
    return out;
  };

  // As Ranker::query in rank.rs: the features a pasted text is matched on.
  Ranker.prototype.query = function (text, toks) {
    var query = featuresOf(toks, true);
    figures(text).forEach(function (x) { query.add(x); });
    xids(text).forEach(function (x) { query.add(x); });
    return query;
  };

  // As only_an_out_of_bounds_access in rank.rs: compute-sanitizer's report
  // of an out-of-bounds access, and no error of the runtime beside it.
  Ranker.prototype.onlyAnOutOfBoundsAccess = function (text) {
    var report = lines(text).some(function (l) {
      return l.trimStart().startsWith("=========") && lower_(l).indexOf(OUT_OF_BOUNDS_REPORT) >= 0;
    });
    if (!report) return false;
    var self = this;
    return !Array.from(this.query(text, tokens(text))).some(function (f) {
      return isErrorName(f) || self.runFeatures.has(f);
    });
  };

  Ranker.prototype.rank = function (text) {
    return this.rankWith(text, this.errors(text));
  };

  // rank(), given the text's errors, for a caller that has them already.
  Ranker.prototype.rankWith = function (text, errs) {
    var self = this;
    // As rank.rs: another backend's out of memory shares CUDA's words.
    if (this.onlyAnOutOfBoundsAccess(text) || anotherBackendsOutOfMemory(text)) return [];
    // As rank.rs: phrases and words are read without the user's code, its
    // figures with it.
    var prose = withoutCode(text);
    // As rank.rs: where the text reports an error beside its notes, they
    // give no phrases or words; a table's rows give none in any text.
    prose = this.errorsNoting(text, true).length ? withoutNotes(prose) : withoutRows(prose);
    var toks = tokens(prose);
    var query = this.query(text, toks);
    var first = errs.length ? errs[0].features : new Set();
    var queryErrors = Array.from(query).filter(isErrorName);
    var pastedWords = vocabularyWords(prose);
    var mentions = apiMentions(text);
    var queryCalls = Array.from(new Set(mentions.map(function (m) { return m.feature; }))).sort(byteOrder);
    var queryMissing = new Set(mentions.filter(function (m) { return m.missing; }).map(function (m) {
      return m.feature;
    }));
    var ranked = [];
    // As rank.rs: a stretch of prose a case shares, where the text holds
    // none of its own words, counts as the pair in it that most cases say,
    // for every case that says the pair.
    var toldPairs = new Set();
    var found = this.index.cases.map(function (c, i) {
      var own = self.own[i];
      var ownFound = pastedWords.filter(function (w) { return own.has(w); });
      // The best text (the first of equals), and all texts together.
      var best = null;
      var total = 0;
      var proseShared = new Set();
      self.textFeatures[i].forEach(function (own) {
        var shared = Array.from(query).filter(function (f) { return own.has(f); }).sort(byteOrder);
        if (ownFound.length === 0) {
          shared = shared.filter(function (f) {
            var prose = f.startsWith("w:") && !self.messageFeatures.has(f);
            if (prose) proseShared.add(f);
            return !prose;
          });
        }
        var namesOthers = queryErrors.length > 0 &&
          Array.from(own).some(isErrorName) &&
          !queryErrors.some(function (f) { return own.has(f); });
        var sum = 0;
        shared.forEach(function (f) {
          sum += self.weight.get(f) * (first.has(f) ? FIRST_ERROR_WEIGHT : 1.0);
        });
        var score = (namesOthers ? OTHER_ERROR_WEIGHT : 1.0) * sum;
        total += score;
        if (best === null || score > best.score) best = { score: score, shared: shared };
      });
      matchedSpans(toks, proseShared).forEach(function (span) {
        var pick = null;
        contentPairs(span.split(" ").map(lower)).forEach(function (p) {
          var k = self.sayers(p);
          if (pick === null || k > pick.k || (k === pick.k && p < pick.p)) pick = { k: k, p: p };
        });
        if (pick !== null) toldPairs.add(pick.p);
      });
      return { best: best === null ? { score: 0, shared: [] } : best, total: total, ownFound: ownFound };
    });
    var told = Array.from(toldPairs).sort(byteOrder);
    this.index.cases.forEach(function (c, i) {
      var best = found[i].best;
      var total = found[i].total;
      var pick = null;
      told.forEach(function (p) {
        if (!self.saidPairs[i].has(p) || !query.has(p)) return;
        var w = self.pairWeight(p) * (first.has(p) ? FIRST_ERROR_WEIGHT : 1.0);
        if (pick === null || w >= pick.w) pick = { p: p, w: w };
      });
      if (pick !== null) {
        if (best.shared.indexOf(pick.p) < 0) best.shared.push(pick.p);
        best.score += pick.w;
      }
      // As in rank.rs: what the figures say, and the error's name, is the
      // case's where any of its texts says it.
      Array.from(query).sort(byteOrder).forEach(function (f) {
        if ((f.indexOf("fig:") !== 0 && !isErrorName(f)) || best.shared.indexOf(f) >= 0) return;
        if (!self.textFeatures[i].some(function (own) { return own.has(f); })) return;
        best.shared.push(f);
        best.score += self.weight.get(f) * (first.has(f) ? FIRST_ERROR_WEIGHT : 1.0);
      });
      // As rank.rs: names alone (a function's, a kernel's) make no match.
      if (best.shared.every(isBareName)) {
        best.shared = [];
        best.score = 0;
      }
      // As rank.rs: the CUDA calls the text names that the case names
      // anywhere, only where the rest of the text does not match it.
      var byCalls = best.score < MIN_SCORE;
      if (byCalls) {
        queryCalls.forEach(function (f) {
          var lacked = self.missingCalls[i].has(f) && !queryMissing.has(f);
          if (best.shared.indexOf(f) >= 0 || !self.apiNames[i].has(f) || lacked) return;
          best.shared.push(f);
          best.score += self.apiWeight.get(f);
        });
      }
      best.shared.sort(byteOrder);
      // As rank.rs: the case's own words the text holds order cases of the
      // same score, their weights summed in byte order.
      var own = self.own[i];
      var ownFound = found[i].ownFound;
      var ownWeight = 0;
      ownFound.slice().sort(byteOrder).forEach(function (w) { ownWeight += own.get(w); });
      if (best.score >= MIN_SCORE) {
        var matched = matchedSpans(toks, new Set(best.shared)).map(function (m) {
          return asWritten(text, m) || m;
        });
        // As rank.rs: the Xid numbers shared, then what the figures said.
        best.shared.forEach(function (f) {
          if (f.startsWith("xid:")) matched.push("Xid " + f.slice(4));
        });
        // As FIGURE_WORDS in features.rs: what the figures said, in its order.
        FIGURE_WORDS.forEach(function (fw) {
          if (best.shared.indexOf(fw[0]) >= 0) matched.push(fw[1]);
        });
        if (ownFound.length) matched.push(OWN_WORDS_SAID.replace("{words}", ownFound.join(", ")));
        var namesTheError = best.shared.some(isErrorName);
        ranked.push({
          i: i, total: total, case: c, score: best.score, namesTheError: namesTheError, byCalls: byCalls,
          byDescription: false,
          matched: matched,
          ownWeight: ownWeight,
        });
      }
    });
    // As rank.rs: prose that matched no case on an error's words is matched
    // on the words of the cases' descriptions, before the calls alone.
    // A compiler's refusal is a build that never ran (rank.rs).
    if (ranked.every(function (r) { return r.byCalls; }) && !reportsABuildFailure(text)) {
      var written = descriptionWordsAsWritten(text);
      var stems = written.map(function (o) { return o[1]; });
      this.index.cases.forEach(function (c, i) {
        // A text that makes the call whose absence is the case's failure
        // tells another failure.
        var makesTheMissingCall = Array.from(self.missingCalls[i]).some(function (f) {
          return queryCalls.indexOf(f) >= 0 && !queryMissing.has(f);
        });
        var distinctive = self.described[i];
        var found = stems.filter(function (w) { return distinctive.has(w); });
        var weight = 0;
        found.slice().sort(byteOrder).forEach(function (w) { weight += distinctive.get(w); });
        // A known failure, reproduced nowhere, is found by its error's words
        // only: words of a description never make a known failure's answer.
        if (!c.reproduced || makesTheMissingCall || found.length < DESCRIPTION_MIN_WORDS ||
          weight < DESCRIPTION_MIN_SCORE) return;
        var matched = found.map(function (w) {
          return written.filter(function (o) { return o[1] === w; })[0][0];
        }).concat([DESCRIPTION_SAID]);
        ranked = ranked.filter(function (r) { return r.i !== i; });
        ranked.push({
          i: i, total: 0, case: c, score: weight, namesTheError: false, byCalls: false, byDescription: true,
          matched: matched, ownWeight: 0,
        });
      });
    }
    ranked.sort(function (a, b) {
      return (b.namesTheError - a.namesTheError) || (a.byCalls - b.byCalls) ||
        (a.byDescription - b.byDescription) || scoreKey(b.score) - scoreKey(a.score) ||
        (b.case.reproduced - a.case.reproduced) || b.ownWeight - a.ownWeight ||
        b.total - a.total || a.i - b.i;
    });
    return ranked;
  };

  // The stretch of the text that holds the phrase's words in order with
  // only punctuation and spaces between them, as rank.rs's as_written.
  function asWritten(text, phrase) {
    var words = phrase.split(" ");
    var from = 0;
    for (;;) {
      var start = text.indexOf(words[0], from);
      if (start < 0) return null;
      var end = start + words[0].length;
      var ok = true;
      for (var k = 1; k < words.length; k++) {
        var rest = text.slice(end);
        var skip = rest.search(/[A-Za-z0-9_]/);
        if (skip < 0) skip = rest.length;
        if (rest.slice(0, skip).indexOf("\n") >= 0 || !rest.slice(skip).startsWith(words[k])) {
          ok = false;
          break;
        }
        end += skip + words[k].length;
      }
      if (ok) return text.slice(start, end);
      from = start + words[0].length;
    }
  }

  function matchedSpans(toks, shared) {
    var covered = toks.map(function () { return false; });
    var ident = toks.map(function () { return false; });
    phrases(toks, true).forEach(function (p) {
      if (!shared.has(p.feature)) return;
      if (p.feature.startsWith("id:")) ident[p.tokens[0]] = true;
      else p.tokens.forEach(function (j) { covered[j] = true; });
    });
    var out = [];
    var phrase = [];
    function flush() {
      // As rank.rs: a function word that ends a span only joined it on.
      while (phrase.length && FUNCTION_WORDS.indexOf(lower(phrase[phrase.length - 1])) >= 0) phrase.pop();
      if (phrase.length) {
        var p = phrase.join(" ");
        if (out.indexOf(p) < 0) out.push(p);
        phrase = [];
      }
    }
    toks.forEach(function (t, i) {
      if (t === BREAK) { flush(); return; }
      if (covered[i]) { phrase.push(t); return; }
      flush();
      if (ident[i] && out.indexOf(t) < 0) out.push(t);
    });
    flush();
    return out;
  }


  function explain(index, text) {
    var ranker = new Ranker(index);
    var errs = ranker.errors(text);
    var first = errs.length ? lower(errs[0].line) : null;
    var matches = ranker.rankWith(text, errs);
    var tied = 0;
    while (tied < matches.length && scoreKey(matches[tied].score) === scoreKey(matches[0].score) &&
      matches[tied].namesTheError === matches[0].namesTheError &&
      matches[tied].byCalls === matches[0].byCalls &&
      matches[tied].byDescription === matches[0].byDescription) tied++;
    // As error_names in answer.rs: the text's error names, as written.
    var unmatched = [];
    if (matches.length > 0 && !matches[0].namesTheError) {
      tokens(text).forEach(function (t) {
        if (t !== BREAK && isIdentifier(t) && isErrorName("id:" + lower(t)) && unmatched.indexOf(t) < 0) {
          unmatched.push(t);
        }
      });
    }
    return {
      errors: errs.map(function (e) { return e.line; }),
      asynchronous: first !== null && ASYNCHRONOUS.some(function (a) { return first.indexOf(a) >= 0; }),
      matches: matches,
      tied: tied,
      unmatched_names: unmatched,
      by_description: matches.length > 0 && matches[0].byDescription,
      out_of_bounds: ranker.onlyAnOutOfBoundsAccess(text),
    };
  }

  window.casebookExplain = { explain: explain, features: features, Ranker: Ranker, configure: configure };
})();
