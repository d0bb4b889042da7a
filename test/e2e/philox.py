"""NumPy Philox4x32-10 (Salmon et al., SC'11), the counter-based generator
behind oflow's training dropout and its weight initializer recipes, checked
against Random123's known-answer vectors."""
import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
LOW32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter, key):
    """Philox4x32-10 on arrays of uint64 words (each < 2^32)."""
    c = [np.asarray(x, np.uint64) for x in counter]
    k0, k1 = key
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]  # 32 x 32 bits: exact in uint64
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & LOW32,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & LOW32]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return c


def check_known_answers():
    # Random123's kat_vectors for philox4x32_10.
    kats = [([0, 0, 0, 0], [0, 0], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
            ([0xffffffff] * 4, [0xffffffff] * 2, [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
            ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0],
             [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1])]
    for counter, key, want in kats:
        got = [int(w) for w in philox4x32_10(counter, key)]
        assert got == want, f"philox4x32_10{counter, key} = {got}, expected {want}"
