#!/usr/bin/env node
// warc-check.mjs: an independent check of WARC files with warcio.js
// (webrecorder's reader, npm package "warcio"). Install next to this file:
//   npm install --prefix tests/e2e        (node_modules is not committed)
//
// Usage: node warc-check.mjs FILE...
// Reads every record of every file with warcio's WARCParser and checks the
// digests. Prints "response <WARC-Target-URI>" for each response record on
// stdout and a summary line on stderr; exits 1 on any digest mismatch,
// short record or parse error (2 on bad usage).
//
// Digests: warcio.js computes digests only when it writes a record; its
// reader has no digest check. So the parsing (gzip members, WARC headers,
// Content-Length framing) is warcio's, and the SHA-1 is node:crypto's over
// the record block as warcio hands it over: the parser runs with
// parseHttp: false so the block is delivered raw, exactly as stored. The
// payload of an application/http record is what follows the HTTP header
// block (the first CRLF CRLF): WARC 1.1 section 5.9 defines it as the HTTP
// entity-body (RFC 2616), i.e. transfer-decoded (no chunked framing) but
// still content-coded, which is how dcrawl stores bodies and how warcio
// itself computes the digest when it writes. A revisit's payload digest
// names an earlier record and is not checked; metadata and warcinfo
// records have block digests only. Digest values may be base32 (the WARC custom),
// hex or base64.
//
// Framing: warcio.js does not fail on a torn file; it stops quietly at a
// cut gzip member and only warns (console.warn) when a record is followed
// by something other than CRLF CRLF. So warcio's warnings count as errors,
// and after the last record only line ends may be left in the file
// (parser.offset + parser.recordLength is where the last record ended).
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser } from "warcio";

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32(buf) {
  let bits = 0, acc = 0, out = "";
  for (const b of buf) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= 0xff;
  }
  if (bits > 0) out += B32[(acc << (5 - bits)) & 31];
  return out;
}

// The digest's algorithm for node:crypto, or null when unknown.
function algorithm(name) {
  const n = name.toLowerCase().replace(/-/g, "");
  return ["sha1", "sha256", "sha512", "md5"].includes(n) ? n : null;
}

// Does "alg:value" match data? null when it cannot be checked.
function matches(spec, data) {
  const colon = spec.indexOf(":");
  const alg = colon > 0 ? algorithm(spec.slice(0, colon)) : null;
  if (!alg) return null;
  const value = spec.slice(colon + 1).trim();
  const md = createHash(alg).update(data).digest();
  const unpadded = value.replace(/=+$/, "");
  return (
    unpadded.toUpperCase() === base32(md) ||
    value.toLowerCase() === md.toString("hex") ||
    unpadded === md.toString("base64").replace(/=+$/, "") ||
    unpadded === md.toString("base64url")
  );
}

function headEnd(block) {
  for (let i = 0; i + 3 < block.length; i++)
    if (block[i] === 13 && block[i + 1] === 10 && block[i + 2] === 13 &&
        block[i + 3] === 10)
      return i + 4;
  return -1;
}

function payloadOf(record, block) {
  const ctype = (record.warcContentType || "").toLowerCase();
  if (!ctype.startsWith("application/http")) return block;
  const end = headEnd(block);
  return end < 0 ? block.subarray(block.length) : block.subarray(end);
}

// Bytes after `end` that are not CR or LF.
function strayBytes(file, end) {
  const size = statSync(file).size;
  if (end >= size) return 0;
  const fd = openSync(file, "r");
  const buf = Buffer.alloc(Math.min(size - end, 1 << 20));
  readSync(fd, buf, 0, buf.length, end);
  closeSync(fd);
  let stray = 0;
  for (const b of buf) if (b !== 10 && b !== 13) stray++;
  return stray + (size - end - buf.length);
}

async function checkFile(file, totals) {
  const parser = new WARCParser(createReadStream(file), { parseHttp: false });
  const warn = console.warn;
  let end = 0;
  console.warn = (...args) => {
    console.error(`${file}: warcio: ${args.join(" ")}`);
    totals.errors++;
  };
  try {
    end = await checkRecords(file, parser, totals);
  } finally {
    console.warn = warn;
  }
  const stray = strayBytes(file, end);
  if (stray) {
    console.error(`${file}: ${stray} bytes after the last complete record ` +
                  `at ${end} (torn or unreadable record)`);
    totals.errors++;
  }
}

// Check each record; returns the file offset where the last one ended.
async function checkRecords(file, parser, totals) {
  let end = 0;
  for await (const record of parser) {
    const block = Buffer.from(await record.readFully(false));
    const where = `${file}: record ${totals.records} (${record.warcType})`;
    totals.records++;
    if (block.length !== record.warcContentLength) {
      console.error(`${where}: block is ${block.length} bytes, ` +
                    `Content-Length ${record.warcContentLength}`);
      totals.errors++;
      end = parser.offset + parser.recordLength;
      continue;
    }
    const bd = record.warcBlockDigest;
    if (bd) {
      const ok = matches(bd, block);
      if (ok === false) {
        console.error(`${where}: block digest mismatch (${bd})`);
        totals.errors++;
      } else if (ok) totals.digests++;
    }
    const pd = record.warcPayloadDigest;
    if (pd && record.warcType !== "revisit") {
      const ok = matches(pd, payloadOf(record, block));
      if (ok === false) {
        console.error(`${where}: payload digest mismatch (${pd})`);
        totals.errors++;
      } else if (ok) totals.digests++;
    }
    if (record.warcType === "response" || record.warcType === "revisit")
      console.log(`${record.warcType} ${record.warcTargetURI}`);
    end = parser.offset + parser.recordLength;
  }
  return end;
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node warc-check.mjs FILE...");
    return 2;
  }
  const totals = { records: 0, digests: 0, errors: 0 };
  for (const file of files) {
    try {
      await checkFile(file, totals);
    } catch (e) {
      console.error(`${file}: ${e && e.message ? e.message : e}`);
      totals.errors++;
    }
  }
  console.error(`warc-check: ${files.length} files, ${totals.records} ` +
                `records, ${totals.digests} digests ok, ${totals.errors} ` +
                `errors`);
  return totals.errors ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
