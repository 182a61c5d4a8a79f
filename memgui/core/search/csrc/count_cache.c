/*
** memgui_bm25's document counts, kept per connection while nothing changed them
** (memgui_bm25.c says when): a MATCH text's counts under the text, or, for a text of plain
** words, each word's under the word.
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

#include "count_cache.h"

unsigned int memguiKeyHash(const char *z, int n) {
  unsigned int h = 2166136261u; /* FNV-1a */
  int i;
  for (i = 0; i < n; i++) h = (h ^ (unsigned char)z[i]) * 16777619u;
  return h;
}

void memguiCacheClear(Cache *p) {
  int i;
  for (i = 0; i < p->nEntry; i++) {
    sqlite3_free(p->aEntry[i].zKey);
    sqlite3_free(p->aEntry[i].aHit);
  }
  p->nEntry = 0;
  memset(p->aSlot, 0, sizeof(int) * CACHE_SLOTS);
}

void memguiCacheDestroy(void *pArg) {
  Cache *p = (Cache *)pArg;
  memguiCacheClear(p);
  sqlite3_free(p->aEntry);
  sqlite3_free(p->aSlot);
  sqlite3_free(p);
}

/* The entry kept under this key, or 0. */
CacheEntry *memguiCacheFind(Cache *p, const char *zKey, int nKey, unsigned int iHash,
                            int bWord, int nPhrase) {
  unsigned int iSlot = iHash % CACHE_SLOTS;
  while (p->aSlot[iSlot]) {
    CacheEntry *e = &p->aEntry[p->aSlot[iSlot] - 1];
    if (e->iHash == iHash && e->nKey == nKey && e->bWord == bWord && e->nPhrase == nPhrase
        && memcmp(e->zKey, zKey, nKey) == 0) {
      return e;
    }
    iSlot = (iSlot + 1) % CACHE_SLOTS;
  }
  return 0;
}

/* Keep the counts under this key (it takes zKey; a copy of aHit). */
void memguiCacheAdd(Cache *p, char *zKey, int nKey, unsigned int iHash, int bWord,
                    int nPhrase, const sqlite3_int64 *aHit) {
  CacheEntry *e;
  unsigned int iSlot;
  sqlite3_int64 *aCopy = sqlite3_malloc64(sizeof(sqlite3_int64) * (nPhrase > 0 ? nPhrase : 1));
  if (aCopy == 0) {
    sqlite3_free(zKey); /* counted; only not kept */
    return;
  }
  memcpy(aCopy, aHit, sizeof(sqlite3_int64) * nPhrase);
  if (p->nEntry == CACHE_MAX) memguiCacheClear(p);
  e = &p->aEntry[p->nEntry++];
  e->zKey = zKey;
  e->nKey = nKey;
  e->iHash = iHash;
  e->bWord = bWord;
  e->nPhrase = nPhrase;
  e->aHit = aCopy;
  iSlot = iHash % CACHE_SLOTS;
  while (p->aSlot[iSlot]) iSlot = (iSlot + 1) % CACHE_SLOTS;
  p->aSlot[iSlot] = p->nEntry;
}

/* The table name, a NUL, then `z`: a cache key (0 when out of memory). */
char *memguiCacheKey(const unsigned char *zTable, int nTable, const char *z, int n,
                     int *pnKey) {
  char *zKey = sqlite3_malloc(nTable + 1 + n);
  if (zKey == 0) return 0;
  memcpy(zKey, zTable, nTable);
  zKey[nTable] = 0;
  memcpy(&zKey[nTable + 1], z, n);
  *pnKey = nTable + 1 + n;
  return zKey;
}

/* Whether the MATCH text is plain words, each a phrase of its own in order: barewords
** (ASCII letters, digits, '_', any non-ASCII byte) between single spaces, none an operator
** (AND, OR, NOT, NEAR). Their starts and lengths into aStart/aLen, `nPhrase` of them. */
int memguiPlainWords(const unsigned char *z, int n, int nPhrase, int *aStart, int *aLen) {
  int nWord = 0, i = 0;
  if (nPhrase < 1 || nPhrase > WORDS_MAX) return 0;
  while (i < n) {
    int iStart = i;
    while (i < n && (z[i] >= 0x80 || (z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z')
                     || (z[i] >= '0' && z[i] <= '9') || z[i] == '_')) {
      i++;
    }
    if (i == iStart || nWord == nPhrase) return 0;
    if ((i - iStart == 2 && memcmp(&z[iStart], "OR", 2) == 0)
        || (i - iStart == 3 && (memcmp(&z[iStart], "AND", 3) == 0 || memcmp(&z[iStart], "NOT", 3) == 0))
        || (i - iStart == 4 && memcmp(&z[iStart], "NEAR", 4) == 0)) {
      return 0;
    }
    aStart[nWord] = iStart;
    aLen[nWord++] = i - iStart;
    if (i < n) {
      if (z[i] != ' ' || i + 1 == n) return 0;
      i++;
    }
  }
  return nWord == nPhrase;
}

/* The state the entries are valid for, or 0 when none may be used now. */
int memguiCacheState(Cache *p, sqlite3_int64 *pnChange, sqlite3_uint64 *piVersion) {
  sqlite3 *db = p->db;
  sqlite3_uint64 iVersion = 0;
  int i;
  if (sqlite3_txn_state(db, 0) == SQLITE_TXN_WRITE) return 0;
  for (i = 0;; i++) {
    const char *zDb = sqlite3_db_name(db, i);
    unsigned int v = 0;
    if (zDb == 0) break;
    if (sqlite3_file_control(db, zDb, SQLITE_FCNTL_DATA_VERSION, &v) == SQLITE_OK) {
      iVersion += ((sqlite3_uint64)v) << (i & 31);
      iVersion += (sqlite3_uint64)i;
    }
  }
  *pnChange = sqlite3_total_changes64(db);
  *piVersion = iVersion;
  return 1;
}
