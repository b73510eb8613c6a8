// Prints, as one JSON document, the data scripts/refresh_text_data.py generates Pressroom's
// text modules from: twitter-text's TLD lists (in its own order) and the current Twemoji
// parser's emoji pattern, with the versions they come from.
'use strict'
const gtld = require('twitter-text/dist/regexp/validGTLD')
const cctld = require('twitter-text/dist/regexp/validCCTLD')
const twemoji = require('@twemoji/parser/dist/lib/regex')

const version = (name) => require(`${name}/package.json`).version
const alternatives = (pattern) => {
  const inner = pattern.source.match(/^\(\?:\(\?:(.*)\)\(\?=\[\^0-9a-zA-Z@\+-\]\|\$\)\)$/)
  if (!inner) throw new Error(`unexpected TLD pattern shape: ${pattern.source.slice(0, 80)}`)
  return inner[1].split('|')
}

process.stdout.write(
  JSON.stringify({
    twitterText: version('twitter-text'),
    twemojiParser: version('@twemoji/parser'),
    genericTlds: alternatives(gtld.default ?? gtld),
    countryTlds: alternatives(cctld.default ?? cctld),
    twemojiPattern: (twemoji.default ?? twemoji).source,
  }),
)
