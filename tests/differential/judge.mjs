// The networks' own text-counting libraries, asked about texts that Pressroom counts too.
//
// Reads JSON lines {"text": "..."} on stdin and writes one JSON line per text, in order:
//   x:          twitter-text parseTweet (weightedLength, valid), as published (3.1.0, whose
//               emoji data is twemoji-parser 11)
//   xEmoji:     the same parseTweet with its emoji parser swapped for the current Twemoji
//               (@twemoji/parser), which X's documentation names as what an emoji is
//   xUrls:      twitter-text extractUrlsWithIndices, [start, end] in UTF-16 units
//   bsky:       @atproto/api RichText graphemeLength and length (UTF-8 bytes)
// An input line that is not JSON is answered with {"error": "..."}.
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { createInterface } from 'node:readline'

import { RichText } from '@atproto/api'

const require = createRequire(import.meta.url)
const twitterText = require('twitter-text')

function parseTweetWithCurrentTwemoji() {
  const parseTweetPath = require.resolve('twitter-text/dist/parseTweet.js')
  const bundledTwemoji = require.resolve('twemoji-parser', { paths: [dirname(parseTweetPath)] })
  const saved = { parser: require.cache[bundledTwemoji], parseTweet: require.cache[parseTweetPath] }
  require.cache[bundledTwemoji] = {
    id: bundledTwemoji,
    filename: bundledTwemoji,
    loaded: true,
    exports: require('@twemoji/parser'),
  }
  delete require.cache[parseTweetPath]
  try {
    return require(parseTweetPath)
  } finally {
    require.cache[bundledTwemoji] = saved.parser
    require.cache[parseTweetPath] = saved.parseTweet
  }
}

const parseTweetCurrent = parseTweetWithCurrentTwemoji()

function judge(text) {
  const stock = twitterText.parseTweet(text)
  const current = parseTweetCurrent(text)
  const rich = new RichText({ text })
  return {
    x: { weightedLength: stock.weightedLength, valid: stock.valid },
    xEmoji: { weightedLength: current.weightedLength, valid: current.valid },
    xUrls: twitterText.extractUrlsWithIndices(text).map((u) => u.indices),
    bsky: { graphemes: rich.graphemeLength, bytes: rich.length },
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (!line.trim()) continue
  let answer
  try {
    answer = judge(JSON.parse(line).text)
  } catch (error) {
    answer = { error: String(error) }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
}
