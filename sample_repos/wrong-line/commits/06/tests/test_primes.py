import unittest

from statkit.primes import factorize, is_prime, next_prime, primes_below


class PrimesTest(unittest.TestCase):
    def test_is_prime(self):
        self.assertEqual([n for n in range(20) if is_prime(n)], [2, 3, 5, 7, 11, 13, 17, 19])

    def test_primes_below(self):
        self.assertEqual(primes_below(30)[-3:], [19, 23, 29])

    def test_factorize(self):
        self.assertEqual(factorize(360), [2, 2, 2, 3, 3, 5])
        self.assertEqual(factorize(97), [97])

    def test_next_prime(self):
        self.assertEqual(next_prime(89), 97)

    def test_factorize_square(self):
        self.assertEqual(factorize(49), [7, 7])
