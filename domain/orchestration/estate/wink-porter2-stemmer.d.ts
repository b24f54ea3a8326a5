// Types for wink-porter2-stemmer (the package ships none): one function, a word to its stem.
declare module 'wink-porter2-stemmer' {
  export default function stem(word: string): string;
}
